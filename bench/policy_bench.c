/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_bench.c - the cost of policy_check() per call, printed as a
 * markdown table.
 *
 * Workload: 5,000 generated workspace paths in a realistic mix (sources,
 * .git objects and refs, node_modules, build output, top-level dotfiles),
 * checked for read (no verdict), for write with the verdict (so flag rules
 * are looked up too, as the filesystem does), and for a mix of all
 * operations with and without the verdict. Policies: empty, the shipped
 * default, the examples (when POLICY_SRCDIR is set), and a generated
 * 200-rule policy. The last column is the mix without verdict answered by
 * a plain scan of every rule instead of the index, for comparison. Each
 * figure is the fastest pass over the 5,000 paths.
 *
 * Usage: policy_bench [SECONDS_PER_CELL]   (default 0.2)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy_int.h"

#define NPATHS 5000

struct workload {
	char *path[NPATHS];
	size_t len[NPATHS];
};

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

static const char *pick(uint64_t *s, const char *const *v, size_t n)
{
	return v[rnd(s) % n];
}

#define PICK(s, v) pick(s, v, sizeof(v) / sizeof(*v))

static const char *const mods[] = {
	"core", "net", "ui", "db", "util", "api", "auth", "cache", "io", "cli",
};
static const char *const exts[] = { "c", "h", "rs", "py", "ts", "go", "md" };
static const char *const pkgs[] = {
	"react", "lodash", "express", "typescript", "webpack", "@babel/core",
	"eslint", "jest", "chalk", "debug",
};
static const char *const top[] = {
	"README.md", "Makefile", "package.json", ".gitignore", ".env",
	".github/workflows/ci.yml", ".vscode/settings.json", ".envrc",
	".git/config", ".git/HEAD", ".git/index", "docs/guide.md",
};

static void gen_path(uint64_t *s, char *buf, size_t size)
{
	unsigned k = rnd(s) % 100;

	if (k < 40)
		snprintf(buf, size, "src/%s/sub%u/file%u.%s", PICK(s, mods),
			 rnd(s) % 8, rnd(s) % 500, PICK(s, exts));
	else if (k < 60)
		snprintf(buf, size, ".git/objects/%02x/%08x%08x%08x%08x%06x",
			 rnd(s) & 0xff, rnd(s), rnd(s), rnd(s), rnd(s),
			 rnd(s) & 0xffffff);
	else if (k < 80)
		snprintf(buf, size, "node_modules/%s/lib/m%u/index%u.js",
			 PICK(s, pkgs), rnd(s) % 20, rnd(s) % 10);
	else if (k < 90)
		snprintf(buf, size, "build/%s/obj%u.o", PICK(s, mods),
			 rnd(s) % 300);
	else if (k < 95)
		snprintf(buf, size, ".git/%s/heads/topic-%u",
			 rnd(s) % 2 ? "refs" : "logs/refs", rnd(s) % 50);
	else
		snprintf(buf, size, "%s", PICK(s, top));
}

static void workload_init(struct workload *w)
{
	uint64_t s = 1;
	char buf[256];

	for (size_t i = 0; i < NPATHS; i++) {
		gen_path(&s, buf, sizeof(buf));
		w->path[i] = strdup(buf);
		w->len[i] = strlen(buf);
	}
}

/* ---- a generated 200-rule policy -------------------------------------- */

static void add_line(struct sbuf *b, uint64_t *s, unsigned i)
{
	switch (i % 8) {
	case 0:
		sbuf_addf(b, "deny write,delete vendor%u/**\n", i);
		break;
	case 1:
		sbuf_addf(b, "readonly third_party/lib%u/\n", i);
		break;
	case 2:
		sbuf_addf(b, "hide **/*.secret%u\n", i);
		break;
	case 3:
		sbuf_addf(b, "flag **/hook%u.sh\n", i);
		break;
	case 4:
		sbuf_addf(b, "allow modify src/%s/tmp%u/\n", PICK(s, mods), i);
		break;
	case 5:
		sbuf_addf(b, "deny delete **/keep%u/**\n", i);
		break;
	case 6:
		sbuf_addf(b, "deny write src/*/gen_%u_*.%s\n", i, PICK(s, exts));
		break;
	default:
		sbuf_addf(b, "deny rename,chmod data%u/*.db\n", i);
		break;
	}
}

static char *generated_policy(unsigned rules)
{
	struct sbuf b = { 0 };
	uint64_t s = 7;

	for (unsigned i = 0; i < rules - 4; i++)
		add_line(&b, &s, i);
	/* a few rules the workload does hit */
	sbuf_addf(&b, "deny delete,truncate .git/objects/\n"
		  "readonly node_modules/\n"
		  "hide **/.env\n"
		  "flag .github/workflows/\n");
	return sbuf_steal(&b);
}

/* ---- timing ----------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum mode { M_READ, M_WRITE, M_MIX, M_MIX_BARE, M_SCAN };

static int one(const struct policy *p, enum mode m, unsigned i,
	       const char *path, size_t len)
{
	struct policy_verdict v;
	enum policy_op op = (enum policy_op)(i % POLICY_OP__COUNT);

	switch (m) {
	case M_READ:
		return policy_check(p, POLICY_OP_READ, path, len, NULL);
	case M_WRITE:
		return policy_check(p, POLICY_OP_WRITE, path, len, &v) +
		       v.flagged;
	case M_MIX:
		return policy_check(p, op, path, len, &v);
	case M_MIX_BARE:
		return policy_check(p, op, path, len, NULL);
	case M_SCAN:
		return index_match_linear(&p->by_op[op], path, len) != NULL;
	}
	return 0;
}

/* Nanoseconds per call: the fastest pass over the paths within `secs`
 * seconds (the minimum filters out other processes on the machine). */
static double measure(const struct policy *p, const struct workload *w,
		      enum mode m, double secs, long *hits)
{
	double t0 = now(), t1, t = t0, best = 1e30;
	long h = 0;

	do {
		t1 = t;
		for (unsigned i = 0; i < NPATHS; i++)
			h += one(p, m, i, w->path[i], w->len[i]) != 0;
		t = now();
		if (t - t1 < best)
			best = t - t1;
	} while (t - t0 < secs);
	*hits = h;
	return best * 1e9 / NPATHS;
}

static void row(const char *name, const struct policy *p,
		const struct workload *w, double secs)
{
	long hits;
	double r = measure(p, w, M_READ, secs, &hits);
	double wr = measure(p, w, M_WRITE, secs, &hits);
	double mix = measure(p, w, M_MIX, secs, &hits);
	double bare = measure(p, w, M_MIX_BARE, secs, &hits);
	double scan = measure(p, w, M_SCAN, secs, &hits);

	printf("| %s | %zu | %.1f | %.1f | %.1f | %.1f | %.1f |\n", name,
	       policy_rule_count(p), r, wr, mix, bare, scan);
}

static void bench_text(const char *name, const char *text,
		       const struct workload *w, double secs)
{
	struct policy *p;
	char *msg = NULL;

	if (policy_load_buf(name, text, strlen(text), &p, &msg)) {
		fprintf(stderr, "%s: %s\n", name, msg ? msg : "?");
		exit(1);
	}
	row(name, p, w, secs);
	policy_free(p);
}

#ifdef POLICY_SRCDIR
static void bench_file(const char *name, const char *path,
		       const struct workload *w, double secs)
{
	struct policy *p;
	char *msg = NULL;

	if (policy_load_file(path, &p, &msg)) {
		fprintf(stderr, "%s: %s\n", path, msg ? msg : "?");
		return;
	}
	row(name, p, w, secs);
	policy_free(p);
}
#endif

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.2;
	struct workload w;
	char *gen = generated_policy(200);

	workload_init(&w);
	printf("policy_check() cost, ns per call, %d paths "
	       "(40%% src, 20%% .git/objects, 20%% node_modules, 10%% build, "
	       "10%% refs/dotfiles)\n\n", NPATHS);
	printf("| policy | rules | read | write + verdict | all ops + verdict "
	       "| all ops | all ops, plain scan |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- |\n");
	bench_text("empty", "", &w, secs);
	bench_text("default.policy", policy_default_text(), &w, secs);
#ifdef POLICY_SRCDIR
	bench_file("strict.policy", POLICY_SRCDIR "/examples/strict.policy",
		   &w, secs);
	bench_file("secrets.policy", POLICY_SRCDIR "/examples/secrets.policy",
		   &w, secs);
	bench_file("ci.policy", POLICY_SRCDIR "/examples/ci.policy", &w, secs);
#endif
	bench_text("generated", gen, &w, secs);
	free(gen);
	for (size_t i = 0; i < NPATHS; i++)
		free(w.path[i]);
	return 0;
}
