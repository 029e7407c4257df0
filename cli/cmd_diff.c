/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_diff.c - txfs diff: the staged changes as a unified diff (or
 * --stat, --name-status, --json), per `txfs exec` command with --command
 * N, and under --salvage from a damaged state folder. It reads the list
 * of changes from the daemon (cmd_txn.c's options and socket), the old
 * contents from the daemon (sp-read: the real directory, or the view at
 * a savepoint) and the new ones from the mount (or, for --command N, the
 * view at the savepoint after it). A patch is git's: renames with
 * "rename from/rename to", mode lines for the execute bit, binary files
 * as git binary patches, deletions first (patch(1) applies in order).
 */
#include <dirent.h>
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

/* Where the two sides of a change are read: the old one from the real
 * directory ("real") or the view at savepoint sp ("at"), the new one
 * from the mount (new_which NULL) or the view at the savepoint after sp
 * ("next": --command N). */
struct dsrc {
	const char *state, *mnt, *sp;
	const char *old_which, *new_which;
	const struct copts *o;
	struct change *all;	/* every change line (folder renames) */
	size_t nall;
};

/* One side of a file's patch: a file to diff and its mode. */
struct side {
	const char *name;	/* path in the tree, NULL: absent */
	char tmp[32];		/* a temp copy ("" when none) */
	const char *file;	/* what diff reads */
	mode_t mode;
};

/* sp-read WHICH SP PATH into a temp file (s->tmp): 0, or -EISDIR/-ELOOP
 * for what is not a regular file, or another -errno. */
static int fetch(const struct dsrc *d, const char *which, struct side *s)
{
	char *req[4] = { "sp-read", (char *)which,
			 (char *)(d->sp ? d->sp : "-"), (char *)s->name };
	char *out = NULL, *nl;
	size_t len = 0, body;
	int err = 0, fd, rc = cli_request(d->state, 4, req, &err, &out, &len);

	if (rc || err || !(nl = memchr(out, '\n', len))) {
		free(out);
		return rc ? rc : err ? -err : -EPROTO;
	}
	s->mode = (mode_t)strtoul(out, NULL, 8);
	body = len - (size_t)(nl + 1 - out);
	snprintf(s->tmp, sizeof(s->tmp), "/tmp/txfs-diff-XXXXXX");
	fd = mkstemp(s->tmp);
	if (fd < 0 || write(fd, nl + 1, body) != (ssize_t)body)
		rc = -EIO;
	if (fd >= 0)
		close(fd);
	free(out);
	s->file = s->tmp;
	return rc;
}

/* Run argv (a diff program) in / and return what it prints. */
static char *run_out(char *const argv[])
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
		if (chdir("/"))
			_exit(127);
		execvp(argv[0], argv);
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

/* diff -u with git-style labels. */
static char *run_diff(const char *a, const char *b, const char *la,
		      const char *lb)
{
	char *argv[] = { "diff", "-u", "--label", (char *)la, "--label",
			 (char *)lb, (char *)a, (char *)b, NULL };

	return run_out(argv);
}

/* A binary file's change as git writes it ("index OLD..NEW" with full
 * object names, then "GIT binary patch" and its literal data), which
 * git apply takes; git diff --no-index makes it (without git: NULL). */
static char *binary_body(const char *a, const char *b)
{
	char *argv[] = { "git", "-c", "core.quotePath=false", "diff",
			 "--no-index", "--binary", "--full-index", "--no-color",
			 "--no-ext-diff", "--no-textconv", "--", (char *)a,
			 (char *)b, NULL };
	char *out, *idx, *bin, *r = NULL;
	size_t il;

	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);	/* no user's diff drivers */
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	out = run_out(argv);
	idx = out ? strstr(out, "\nindex ") : NULL;
	bin = out ? strstr(out, "\nGIT binary patch\n") : NULL;
	if (idx && bin) {
		idx++;
		il = strcspn(idx, " \n");
		il += strcspn(idx + il + 1, " \n") + 1;	/* "index A..B" */
		if (asprintf(&r, "%.*s\n%s", (int)il, idx, bin + 1) < 0)
			r = NULL;
	}
	free(out);
	return r;
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

/* A name for a git header line, prefix+name as label() gives it, but
 * between double quotes when it holds a space (GNU patch reads an
 * unquoted name there only up to the first space; git apply takes both).
 * false when it does not fit. */
static bool hlabel(char *out, size_t size, const char *prefix,
		   const char *name)
{
	if (!label(out, size, prefix, name, false))
		return false;
	if (out[0] == '"' || !strpbrk(name, " \t"))
		return true;
	if (strlen(out) + 3 > size)
		return false;
	memmove(out + 1, out, strlen(out) + 1);
	out[0] = '"';
	strcat(out, "\"");
	return true;
}

/* git's file mode: 100755 when any execute bit is set, else 100644. */
static unsigned git_mode(mode_t m)
{
	return m & 0111 ? 0100755 : 0100644;
}

static void side_done(struct side *s)
{
	if (s->tmp[0])
		unlink(s->tmp);
	s->tmp[0] = '\0';
}

/* Print the git patch of one file from old to new (either NULL: created
 * or deleted; two names: renamed). *dir: old or new is a folder (nothing
 * printed). */
static int diff_file(const struct dsrc *d, const char *old, const char *new,
		     bool *dir)
{
	char la[LABEL_MAX], lb[LABEL_MAX], sa[LABEL_MAX], sb[LABEL_MAX],
	     newp[PATH_MAX * 2], *q;
	struct side a = { .name = old, .file = "/dev/null" },
		    b = { .name = new, .file = "/dev/null" };
	const struct copts *o = d->o;
	struct stat st;
	char *t = NULL, *bin = NULL;
	bool renamed = old && new && strcmp(old, new);
	int rc = 0;

	*dir = false;
	if (old && (rc = fetch(d, d->old_which, &a)) == -EACCES) {
		/* the daemon serves nothing the policy denies reading */
		q = audit_cquote(old, NULL);
		cli_err(0, "diff: %s: content withheld (the policy denies "
			"reading it); its change is listed by --name-status",
			q ? q : "?");
		free(q);
		rc = 0;
		goto out;
	}
	if (rc)
		goto out;
	if (new && d->new_which) {
		if ((rc = fetch(d, d->new_which, &b)))
			goto out;
	} else if (new) {
		snprintf(newp, sizeof(newp), "%s/%s", d->mnt, new);
		if (lstat(newp, &st))
			goto out;	/* gone since the list was made */
		if (!S_ISREG(st.st_mode)) {
			rc = S_ISDIR(st.st_mode) ? -EISDIR : -ELOOP;
			goto out;
		}
		b.file = newp;
		b.mode = st.st_mode;
		for (size_t i = 0; i < o->ngaps; i++)
			if (st.st_ino >= o->gaps[i][0] &&
			    st.st_ino <= o->gaps[i][1]) {
				q = audit_cquote(new, NULL);
				cli_err(0, "diff: %s: its staged content may be "
					"incomplete (the damaged layer's data for "
					"it could not all be read)", q ? q : "?");
				free(q);
				break;
			}
	}
	if (!label(la, sizeof(la), "a/", old, true) ||
	    !label(lb, sizeof(lb), "b/", new, true) ||
	    !(renamed ? hlabel(sa, sizeof(sa), "a/", old) :
			label(sa, sizeof(sa), "a/", old ? old : new, false)) ||
	    !(renamed ? hlabel(sb, sizeof(sb), "b/", new) :
			label(sb, sizeof(sb), "b/", new ? new : old, false))) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	t = run_diff(a.file, b.file, la, lb);
	if (t && !strncmp(t, "Binary files ", 13))
		bin = binary_body(a.file, b.file);
	if (o->stat) {
		unsigned plus, minus;

		stat_counts(t, &plus, &minus);
		label(sa, sizeof(sa), "", new ? new : old, false);
		if (bin || (t && !strncmp(t, "Binary files ", 13)))
			printf(" %s | Bin\n", sa);
		else if ((t && t[0]) || !old || !new || renamed)
			printf(" %s | %u +%u -%u\n", sa, plus + minus, plus,
			       minus);
		goto out;
	}
	if (!(t && t[0]) && old && new && !renamed &&
	    git_mode(a.mode) == git_mode(b.mode))
		goto out;	/* times or owner only: nothing a patch says */
	printf("diff --git %s %s\n", sa, sb);
	if (!old)
		printf("new file mode %o\n", git_mode(b.mode));
	else if (!new)
		printf("deleted file mode %o\n", git_mode(a.mode));
	else if (git_mode(a.mode) != git_mode(b.mode))
		printf("old mode %o\nnew mode %o\n", git_mode(a.mode),
		       git_mode(b.mode));
	if (renamed && hlabel(la, sizeof(la), "", old) &&
	    hlabel(lb, sizeof(lb), "", new))
		printf("rename from %s\nrename to %s\n", la, lb);
	fputs(bin ? bin : t ? t : "", stdout);
out:
	if (rc == -EISDIR || rc == -ELOOP) {
		*dir = rc == -EISDIR;
		rc = 0;	/* folders, symlinks: no text to diff */
	}
	free(t);
	free(bin);
	side_done(&a);
	side_done(&b);
	return rc;
}

/* The old path of path new in a full diff: a change line names an object
 * where it is now; below a renamed folder ("R OLD -> NEW") it was at
 * OLD/... in the real directory (the longest such NEW applies). */
static char *old_path(const struct dsrc *d, const char *path)
{
	const struct change *best = NULL;
	size_t bl = 0;
	char *r;

	for (size_t i = 0; i < d->nall; i++) {
		const struct change *c = &d->all[i];
		size_t l = strlen(c->new ? c->new : "");

		if (c->kind == 'R' && l > bl && !strncmp(path, c->new, l) &&
		    path[l] == '/')
			best = c, bl = l;
	}
	if (!best)
		return strdup(path);
	if (asprintf(&r, "%s%s", best->old, path + bl) < 0)
		return NULL;
	return r;
}

/* Is path the new name of a change line (its own patch)? */
static bool listed_new(const struct dsrc *d, const char *path, bool rename)
{
	for (size_t i = 0; i < d->nall; i++)
		if (d->all[i].new && !strcmp(d->all[i].new, path) &&
		    (!rename || d->all[i].kind == 'R'))
			return true;
	return false;
}

/* A renamed folder: every regular file below its new name that no change
 * line names moved with it (a rename from its old path, as git says it);
 * folders renamed on their own below it are walked for their line. */
static int walk_renamed(const struct dsrc *d, const char *rel)
{
	char path[PATH_MAX * 2];
	struct dirent **ents = NULL;
	int n, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", d->mnt, rel);
	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0)
		return 0;	/* gone since the list was made */
	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		char *sub = NULL, *old;
		bool dir;

		if (rc || !strcmp(nm, ".") || !strcmp(nm, "..") ||
		    asprintf(&sub, "%s/%s", rel, nm) < 0) {
			free(ents[i]);
			continue;
		}
		if (listed_new(d, sub, false)) {
			free(sub);
			free(ents[i]);
			continue;
		}
		old = old_path(d, sub);
		rc = old ? diff_file(d, old, sub, &dir) : -ENOMEM;
		if (rc == 0 && dir)
			rc = walk_renamed(d, sub);
		free(old);
		free(sub);
		free(ents[i]);
	}
	free(ents);
	return rc;
}

/* The patch of one change line. */
static int diff_change(const struct dsrc *d, const struct change *c)
{
	char *old = c->kind == 'M' ? old_path(d, c->new) : NULL;
	bool dir = false;
	int rc;

	if (c->kind == 'M' && !old)
		return -ENOMEM;
	rc = diff_file(d, c->kind == 'M' ? old : c->old, c->new, &dir);
	free(old);
	if (rc == 0 && dir && c->kind == 'R')
		rc = walk_renamed(d, c->new);
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
		"--since gives what changed since that savepoint, --command N\n"
		"what `txfs exec` command N changed, both against the tree at\n"
		"the savepoint (the patch turns that tree into the tree now, or\n"
		"after command N). A name holding a control\n"
		"byte (newline, tab), '\"', '\\', bytes outside UTF-8 is C-quoted as\n"
		"git quotes it (\"new\\nline\", \"bad\\377\"); others print as they\n"
		"are (see txfs(1), NAMES IN OUTPUT).\n";
	char state[PATH_MAX], *out = NULL, *req[2] = { "changes", NULL },
	     sp[64], *mnt;
	struct dsrc d = { .old_which = "real" };
	struct copts o;
	size_t len;
	int rc = copts_parse(argc, argv, &o, usage, "snSN"), err = 0;

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
		char *nl = out ? strchr(out, '\n') : NULL;

		if (nl && !nl[1])
			*nl = '\0';
		/* the daemon's words say why; errno only when it said none */
		cli_err(rc ? rc : out && out[0] ? 0 : -err, "diff %s%s%s",
			argv[o.first], out && out[0] ? ": " : "",
			out ? out : "");
		free(out);
		return 1;
	}
	load_gaps(state, &o);
	mnt = realpath(argv[o.first], NULL);	/* diff and git run in / */
	d.state = state;
	d.mnt = mnt ? mnt : argv[o.first];
	d.o = &o;
	if (o.since || o.command) {
		d.sp = o.since ? o.since : sp;
		d.old_which = "at";
		d.new_which = o.command ? "next" : NULL;
		if (o.command)
			snprintf(sp, sizeof(sp), "cmd-%s", o.command);
	}
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		struct change c, *v;

		if (parse_change(l, &c)) {
			char *q = audit_quote(l);

			cli_err(0, "diff: cannot read the change line '%s'",
				q ? q : "?");
			free(q);
			rc = 1;
			continue;
		}
		if (!(v = realloc(d.all, (d.nall + 1) * sizeof(*v)))) {
			change_free(&c);
			rc = 1;
			break;
		}
		d.all = v;
		d.all[d.nall++] = c;
	}
	/* deletions first: a later line may create or rename a file onto
	 * the name (patch(1) applies the files in order) */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < d.nall; i++) {
			const struct change *c = &d.all[i];

			if ((o.name_status ? pass == 1 :
			     (c->kind == 'D') != (pass == 0)) ||
			    (!under(c->new ? c->new : c->old,
				    argc - o.first - 1, argv + o.first + 1) &&
			     !(c->old && under(c->old, argc - o.first - 1,
					       argv + o.first + 1))))
				continue;
			if (o.name_status)
				print_name_status(c);
			else if ((err = diff_change(&d, c))) {
				char *q = audit_cquote(c->new ? c->new : c->old,
						       NULL);

				cli_err(err, "diff: %s", q ? q : "?");
				free(q);
				rc = 1;
			}
		}
	for (size_t i = 0; i < d.nall; i++)
		change_free(&d.all[i]);
	free(d.all);
	free(mnt);
	free(out);
	free(o.gaps);
	if (salvage_gaps(state, argv[o.first]))
		rc = 1;
	return rc ? 1 : 0;
}
