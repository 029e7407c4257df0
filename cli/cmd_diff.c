/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_diff.c - txfs diff: the staged changes as a unified diff (or
 * --stat, --name-status, --json), per `txfs exec` command with --command
 * N, and under --salvage from a damaged state folder. It reads the list
 * of changes from the daemon (cmd_txn.c's options and socket) and the
 * contents from the mount and the real directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "policy.h"
#include "../fs/mount.h"

struct change {
	char kind;
	char *old, *new;	/* paths; NULL when absent */
	bool review;		/* a flag rule matches: needs review */
};

static bool under(const char *path, int n, char **filters)
{
	if (!n)
		return true;
	for (int i = 0; i < n; i++) {
		size_t l = strlen(filters[i]);

		while (l && filters[i][l - 1] == '/')
			l--;
		if (!strncmp(path, filters[i], l) &&
		    (path[l] == '\0' || path[l] == '/'))
			return true;
	}
	return false;
}

/* One name of a change line at *p: C-quoted ("...", audit_cquote) or
 * plain up to stop (" -> " in an R line), a TAB or the end. malloc'd. */
static int take_name(const char **p, const char *stop, char **out)
{
	const char *e = NULL;

	if (**p == '"')
		return audit_cunquote(*p, out, p);
	if (stop)
		e = strstr(*p, stop);
	if (!e)
		e = *p + strcspn(*p, "\t");
	if (e == *p || !(*out = strndup(*p, (size_t)(e - *p))))
		return e == *p ? -EINVAL : -ENOMEM;
	*p = e;
	return 0;
}

/* A line of .txfs/changes: "K NAME", "R OLD -> NEW", then optionally
 * TAB "(needs review)"; names as take_name() reads them. c->old and c->new
 * are malloc'd (change_free). */
static int parse_change(const char *line, struct change *c)
{
	const char *p = line + 2;
	char *a = NULL;
	int rc;

	memset(c, 0, sizeof(*c));
	if (strlen(line) < 3 || line[1] != ' ' || !strchr("AMDR", line[0]))
		return -EINVAL;
	c->kind = line[0];
	rc = take_name(&p, c->kind == 'R' ? " -> " : NULL, &a);
	if (rc == 0 && c->kind == 'R') {
		if (strncmp(p, " -> ", 4))
			rc = -EINVAL;
		p += rc ? 0 : 4;
		if (rc == 0)
			rc = take_name(&p, NULL, &c->new);
	}
	if (rc == 0 && *p && *p != '\t')
		rc = -EINVAL;
	if (rc) {
		free(a);
		free(c->new);
		return rc;
	}
	c->review = *p == '\t' && strstr(p + 1, "needs review");
	if (c->kind != 'A')
		c->old = a;
	if (c->kind == 'A' || c->kind == 'M')
		c->new = c->kind == 'A' ? a : strdup(a);
	return c->new || c->kind == 'D' ? 0 : -ENOMEM;
}

static void change_free(struct change *c)
{
	free(c->old);
	free(c->new);
}

/* The real content of path into a temp file; its name in tmpl. */
static int real_to_temp(const char *state, const char *path, char *tmpl)
{
	char *req[2] = { "real", (char *)path }, *out = NULL;
	size_t len = 0;
	int err = 0, fd, rc = cli_request(state, 2, req, &err, &out, &len);

	if (rc || err) {
		free(out);
		return rc ? rc : -err;
	}
	fd = mkstemp(tmpl);
	if (fd < 0 || write(fd, out, len) != (ssize_t)len)
		rc = -EIO;
	if (fd >= 0)
		close(fd);
	free(out);
	return rc;
}

/* Run diff -u with git-style labels; returns its output. */
static char *run_diff(const char *a, const char *b, const char *la,
		      const char *lb)
{
	int p[2];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	pid_t pid;

	if (pipe(p))
		return NULL;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execlp("diff", "diff", "-u", "--label", la, "--label", lb, a, b,
		       (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = open_memstream(&buf, &len);
	if (f) {
		char chunk[65536];
		ssize_t n;

		while ((n = read(p[0], chunk, sizeof(chunk))) > 0)
			fwrite(chunk, 1, (size_t)n, f);
		fclose(f);
	}
	close(p[0]);
	waitpid(pid, NULL, 0);
	return buf;
}

static void stat_counts(const char *d, unsigned *plus, unsigned *minus)
{
	*plus = *minus = 0;
	for (const char *l = d; l && *l;) {
		const char *e = strchr(l, '\n');

		if (l[0] == '+' && strncmp(l, "+++ ", 4))
			(*plus)++;
		else if (l[0] == '-' && strncmp(l, "--- ", 4))
			(*minus)++;
		l = e ? e + 1 : NULL;
	}
}

/* A name quoted at most 4 times its length, a prefix, a TAB, quotes. */
#define LABEL_MAX (PATH_MAX * 4 + 8)

/* The patch label prefix+name in out: git's form, C-quoted as a whole
 * ("a/new\nline") when the name needs it (audit_cquote), so that git
 * apply and patch(1) read the exact name; /dev/null when name is NULL.
 * For diff's --label (tab), a plain name with a space ends with a TAB, as
 * patch(1) needs. false when it does not fit. */
static bool label(char *out, size_t size, const char *prefix,
		  const char *name, bool tab)
{
	char *q = name ? audit_cquote(name, NULL) : NULL;
	int n;

	if (!name)
		n = snprintf(out, size, "/dev/null");
	else if (!q)
		n = -1;
	else if (q[0] == '"')
		n = snprintf(out, size, "\"%s%s", prefix, q + 1);
	else
		n = snprintf(out, size, "%s%s%s", prefix, name,
			     tab && strchr(name, ' ') ? "\t" : "");
	free(q);
	return n >= 0 && (size_t)n < size;
}

static int diff_one(const char *state, const char *mnt, const struct change *c,
		    const struct copts *o)
{
	char told[] = "/tmp/txfs-diff-XXXXXX", la[LABEL_MAX], lb[LABEL_MAX],
	     sa[LABEL_MAX], sb[LABEL_MAX], newp[PATH_MAX * 2];
	const char *a = "/dev/null", *b = "/dev/null";
	struct stat st;
	char *d;
	int rc = 0;

	if (c->old) {
		if ((rc = real_to_temp(state, c->old, told)))
			return rc == -EISDIR || rc == -ELOOP ? 0 : rc;
		a = told;
	}
	if (c->new) {
		snprintf(newp, sizeof(newp), "%s/%s", mnt, c->new);
		if (lstat(newp, &st) || !S_ISREG(st.st_mode))
			goto out;
		b = newp;
		for (size_t i = 0; i < o->ngaps; i++)
			if (st.st_ino >= o->gaps[i][0] &&
			    st.st_ino <= o->gaps[i][1]) {
				char *q = audit_cquote(c->new, NULL);

				cli_err(0, "diff: %s: its staged content may be "
					"incomplete (the damaged layer's data for "
					"it could not all be read)", q ? q : "?");
				free(q);
				break;
			}
	}
	if (!label(la, sizeof(la), "a/", c->old, true) ||
	    !label(lb, sizeof(lb), "b/", c->new, true)) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	d = run_diff(a, b, la, lb);
	if (o->stat) {
		unsigned plus, minus;

		stat_counts(d, &plus, &minus);
		label(sa, sizeof(sa), "", c->new ? c->new : c->old, false);
		printf(" %s | %u +%u -%u\n", sa, plus + minus, plus, minus);
	} else if (d && d[0]) {
		label(sa, sizeof(sa), "a/", c->old ? c->old : c->new, false);
		label(sb, sizeof(sb), "b/", c->new ? c->new : c->old, false);
		printf("diff --git %s %s\n", sa, sb);
		if (!c->old)
			printf("new file mode 100644\n");
		if (!c->new)
			printf("deleted file mode 100644\n");
		fputs(d, stdout);
	}
	free(d);
out:
	if (a == told)
		unlink(told);
	return rc;
}

/* "K\tNAME" (R: "R\tOLD\tNEW"), names quoted as git quotes them. */
static void print_name_status(const struct change *c)
{
	char *a = audit_cquote(c->old ? c->old : c->new, NULL);
	char *b = c->kind == 'R' ? audit_cquote(c->new, NULL) : NULL;

	printf("%c\t%s%s%s%s\n", c->kind, a ? a : "?",
	       c->kind == 'R' ? "\t" : "", c->kind == 'R' ? (b ? b : "?") : "",
	       c->review ? "\t(needs review)" : "");
	free(a);
	free(b);
}

/* Under --salvage, the parts of the damaged layer that could not be read
 * (STATE/salvaged/lost.txt, see fs/layer/salvage.c): said on stderr, so the
 * patch is known to be partial. Returns whether there were any. */
static bool salvage_gaps(const char *state, const char *mnt)
{
	char path[PATH_MAX + 32], line[1024];
	bool any = false, objects = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/salvaged/lost.txt", state);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!any)
			cli_err(0, "diff %s: the layer is damaged; the changes "
				"below could not be read and are missing from "
				"this diff:", mnt);
		fprintf(stderr, "  %s", line);
		objects = objects || strstr(line, "object ");
		any = true;
	}
	fclose(f);
	if (objects)
		fprintf(stderr, "  (object N is an inode number: "
			"find %s -inum N names the file)\n", mnt);
	return any;
}

/* Load STATE/salvaged/lost.objects into o (none: no gaps). */
static void load_gaps(const char *state, struct copts *o)
{
	char path[PATH_MAX + 32];
	unsigned long long a, b, (*g)[2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/salvaged/lost.objects", state);
	if (!(f = fopen(path, "re")))
		return;
	while (fscanf(f, "%llu %llu", &a, &b) == 2 &&
	       (g = realloc(o->gaps, (o->ngaps + 1) * sizeof(*g)))) {
		o->gaps = g;
		o->gaps[o->ngaps][0] = a;
		o->gaps[o->ngaps++][1] = b;
	}
	fclose(f);
}

int cmd_diff(int argc, char **argv)
{
	static const char usage[] =
		"usage: txfs diff [--stat | --name-status] [--since SAVEPOINT |\n"
		"                 --command N] MNT [PATH...]\n\n"
		"The staged changes as a unified diff (git style, usable with\n"
		"`git apply` or `patch -p1` against the real directory).\n"
		"--since limits it to the paths changed since that savepoint,\n"
		"--command N to those `txfs exec` command N changed (each still\n"
		"diffed against the real directory). A name holding a control\n"
		"byte (newline, tab), '\"', '\\', bytes outside UTF-8 is C-quoted as\n"
		"git quotes it (\"new\\nline\", \"bad\\377\"); others print as they\n"
		"are (see txfs(1), NAMES IN OUTPUT).\n";
	char state[PATH_MAX], *out = NULL, *req[2] = { "changes", NULL },
	     sp[64];
	struct copts o;
	size_t len;
	int rc = copts_parse(argc, argv, &o, usage), err = 0;

	if (rc || o.help)
		return rc;
	if (argc - o.first < 1) {
		cli_err(0, "diff: missing MNT");
		return 2;
	}
	if ((rc = cli_find_state(argv[o.first], o.ctl, state, sizeof(state)))) {
		cli_err_find_state(rc, "diff ", argv[o.first], o.ctl);
		return 1;
	}
	snprintf(sp, sizeof(sp), "%s", o.command ? o.command : "");
	if (o.since || o.command) {
		req[0] = o.since ? "changes-since" : "cmd-changes";
		req[1] = o.since ? (char *)o.since : sp;
	}
	if ((rc = cli_request(state, req[1] ? 2 : 1, req, &err, &out, &len)) ||
	    err) {
		cli_err(rc ? rc : out && out[0] ? 0 : -err, "diff %s%s%s",
			argv[o.first],
			out && out[0] ? ": " : "", out ? out : "");
		free(out);
		return 1;
	}
	load_gaps(state, &o);
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		struct change c;

		if (parse_change(l, &c)) {
			char *q = audit_quote(l);

			cli_err(0, "diff: cannot read the change line '%s'",
				q ? q : "?");
			free(q);
			rc = 1;
			continue;
		}
		if (!under(c.new ? c.new : c.old, argc - o.first - 1,
			   argv + o.first + 1)) {
			change_free(&c);
			continue;
		}
		if (o.name_status) {
			print_name_status(&c);
		} else if (c.kind == 'R') {
			/* a rename as a deletion and a creation: applies
			 * with patch -p1 and git apply alike */
			struct change del = { 'D', c.old, NULL, c.review };
			struct change add = { 'A', NULL, c.new, c.review };

			if (diff_one(state, argv[o.first], &del, &o) ||
			    diff_one(state, argv[o.first], &add, &o))
				rc = 1;
		} else if (diff_one(state, argv[o.first], &c, &o)) {
			rc = 1;
		}
		change_free(&c);
	}
	free(out);
	free(o.gaps);
	if (salvage_gaps(state, argv[o.first]))
		rc = 1;
	return rc ? 1 : 0;
}
