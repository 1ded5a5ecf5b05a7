// floor — the least a FUSE server can cost for a given tree of names.
//
// It serves, read-only and from memory, the tree a manifest describes
// (the same names, types, sizes and link targets as a pifs mount), and
// does nothing else: no parse, no render, no index. Its file contents are
// a repeated pattern of the right length. bench/scale measures what a
// user runs on it beside what the same command costs on pifs, so that a
// figure pifs misses can be told apart from one no FUSE server meets on
// this kernel and machine.
//
// It answers the way that costs the kernel fewest requests: one thread,
// no OPEN or OPENDIR (ENOSYS, so no RELEASE either), no xattrs, no
// FLUSH, symlink targets and attributes cached for 30 s (as pifs caches
// them), READDIRPLUS on. pifs cannot do without OPEN (its controls keep a
// transaction per open file), so this floor is below pifs's own.
//
// With -d, files are opened as pifs opens the files it serves from
// memory and session.jsonl: direct I/O, each read(2) a READ request, no
// page kept (OPEN answered, RELEASE then comes too), so that reading a
// large file costs what it costs on pifs but for making its bytes: the
// floor of reads. Directories are still not opened.
//
// Usage: floor [-d] MANIFEST MOUNTPOINT [fuse options]
// MANIFEST holds, for each name, four NUL-terminated fields: the type (d,
// f or l), the size, the path relative to the mount (a leading "./" is
// dropped) and the link target (empty unless l), as
//   find . -printf '%y\0%s\0%p\0%l\0'
// writes them. Parents are made as needed.
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TIMEOUT 30.0

struct node {
	char *name;
	char type; // 'd', 'f' or 'l'
	uint64_t size;
	char *target;
	fuse_ino_t parent;
	fuse_ino_t *kids;
	size_t nkids, capkids;
};

static struct node *nodes; // by inode number; 1 is the root
static size_t nnodes, capnodes;

// The (parent, name) → inode table, open addressing.
static fuse_ino_t *table;
static size_t tablecap;

static uint64_t hash(fuse_ino_t parent, const char *name) {
	uint64_t h = 1469598103934665603ULL ^ parent;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h;
}

static void put(fuse_ino_t ino);

static void grow(void) {
	fuse_ino_t *old = table;
	size_t oldcap = tablecap;
	tablecap = tablecap ? tablecap * 2 : 1024;
	table = calloc(tablecap, sizeof *table);
	for (size_t i = 0; i < oldcap; i++)
		if (old[i])
			put(old[i]);
	free(old);
}

static void put(fuse_ino_t ino) {
	size_t i = hash(nodes[ino].parent, nodes[ino].name) & (tablecap - 1);
	while (table[i])
		i = (i + 1) & (tablecap - 1);
	table[i] = ino;
}

static fuse_ino_t find(fuse_ino_t parent, const char *name) {
	if (!tablecap)
		return 0;
	for (size_t i = hash(parent, name) & (tablecap - 1); table[i]; i = (i + 1) & (tablecap - 1)) {
		struct node *n = &nodes[table[i]];
		if (n->parent == parent && !strcmp(n->name, name))
			return table[i];
	}
	return 0;
}

static fuse_ino_t add(fuse_ino_t parent, const char *name, char type) {
	fuse_ino_t ino = find(parent, name);
	if (ino)
		return ino;
	if (nnodes + 1 >= capnodes) {
		capnodes = capnodes ? capnodes * 2 : 1024;
		nodes = realloc(nodes, capnodes * sizeof *nodes);
	}
	ino = nnodes++;
	nodes[ino] = (struct node){.name = strdup(name), .type = type, .parent = parent, .target = ""};
	if ((nnodes + 1) * 2 > tablecap)
		grow();
	put(ino);
	struct node *p = &nodes[parent];
	if (p->nkids == p->capkids) {
		p->capkids = p->capkids ? p->capkids * 2 : 8;
		p->kids = realloc(p->kids, p->capkids * sizeof *p->kids);
	}
	p->kids[p->nkids++] = ino;
	return ino;
}

// path adds a path's parents as folders and returns its own node.
static fuse_ino_t path(char *p, char type) {
	fuse_ino_t at = 1;
	if (!strncmp(p, "./", 2))
		p += 2;
	else if (!strcmp(p, "."))
		return 1;
	for (char *s; (s = strchr(p, '/')); p = s + 1) {
		*s = 0;
		if (*p)
			at = add(at, p, 'd');
	}
	return *p ? add(at, p, type) : at;
}

static char *field(char **at, char *end) {
	char *f = *at;
	char *z = memchr(f, 0, end - f);
	if (!z) {
		fprintf(stderr, "floor: the manifest ends inside a name\n");
		exit(1);
	}
	*at = z + 1;
	return f;
}

static void load(const char *file) {
	FILE *f = fopen(file, "r");
	if (!f) {
		perror(file);
		exit(1);
	}
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	for (size_t n; (n = fread(buf + len, 1, cap - len, f)) > 0;) {
		len += n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	nnodes = 2; // 0 is no node
	capnodes = 1024;
	nodes = calloc(capnodes, sizeof *nodes);
	nodes[1] = (struct node){.name = "", .type = 'd', .parent = 0, .target = ""};
	grow();
	for (char *at = buf, *end = buf + len; at < end;) {
		char *type = field(&at, end), *size = field(&at, end);
		char *name = field(&at, end), *target = field(&at, end);
		char t = type[0] == 'd' ? 'd' : type[0] == 'l' ? 'l' : 'f';
		fuse_ino_t ino = path(name, t); // before nodes is read: path may move it
		struct node *n = &nodes[ino];
		if (t != 'd')
			n->size = strtoull(size, NULL, 10);
		if (t == 'l') {
			n->target = strdup(target);
			n->size = strlen(target);
		}
	}
	free(buf); // every name and target was copied
}

static void fill(fuse_ino_t ino, struct stat *st) {
	struct node *n = &nodes[ino];
	memset(st, 0, sizeof *st);
	st->st_ino = ino;
	st->st_nlink = 1;
	st->st_size = n->size;
	st->st_blksize = 4096;
	st->st_blocks = (n->size + 511) / 512;
	st->st_mode = n->type == 'd' ? S_IFDIR | 0755 : n->type == 'l' ? S_IFLNK | 0777 : S_IFREG | 0644;
}

static void entry(fuse_ino_t ino, struct fuse_entry_param *e) {
	memset(e, 0, sizeof *e);
	e->ino = ino;
	e->attr_timeout = e->entry_timeout = TIMEOUT;
	fill(ino, &e->attr);
}

static void op_init(void *data, struct fuse_conn_info *conn) {
	conn->want |= conn->capable & (FUSE_CAP_CACHE_SYMLINKS | FUSE_CAP_READDIRPLUS);
	conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
	fuse_ino_t ino = find(parent, name);
	if (!ino) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	struct fuse_entry_param e;
	entry(ino, &e);
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
	struct stat st;
	fill(ino, &st);
	fuse_reply_attr(req, &st, TIMEOUT);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino) { fuse_reply_readlink(req, nodes[ino].target); }

static void op_nosys(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) { fuse_reply_err(req, ENOSYS); }

static int direct_io; // -d

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
	if (!direct_io) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	fi->direct_io = 1;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) { fuse_reply_err(req, 0); }

static char pattern[1 << 20];

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
	uint64_t len = nodes[ino].size;
	if ((uint64_t)off >= len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (off + size > len)
		size = len - off;
	if (size > sizeof pattern)
		size = sizeof pattern;
	fuse_reply_buf(req, pattern, size);
}

static void readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, int plus) {
	struct node *d = &nodes[ino];
	char *buf = malloc(size);
	size_t used = 0;
	// Offsets 1 and 2 are . and .., then the children.
	for (off_t i = off; (size_t)i < d->nkids + 2; i++) {
		const char *name = i == 0 ? "." : i == 1 ? ".." : nodes[d->kids[i - 2]].name;
		fuse_ino_t kid = i == 0 ? ino : i == 1 ? (d->parent ? d->parent : 1) : d->kids[i - 2];
		size_t n;
		if (plus) {
			struct fuse_entry_param e;
			entry(kid, &e);
			if (i < 2)
				e.ino = 0, e.attr.st_ino = kid; // not looked up
			n = fuse_add_direntry_plus(req, buf + used, size - used, name, &e, i + 1);
		} else {
			struct stat st;
			fill(kid, &st);
			n = fuse_add_direntry(req, buf + used, size - used, name, &st, i + 1);
		}
		if (n > size - used)
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
	readdir(req, ino, size, off, 0);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
	readdir(req, ino, size, off, 1);
}

static const struct fuse_lowlevel_ops ops = {
    .init = op_init,
    .lookup = op_lookup,
    .getattr = op_getattr,
    .readlink = op_readlink,
    .open = op_open,
    .release = op_release,
    .opendir = op_nosys,
    .read = op_read,
    .readdir = op_readdir,
    .readdirplus = op_readdirplus,
};

int main(int argc, char **argv) {
	if (argc > 1 && !strcmp(argv[1], "-d")) {
		direct_io = 1;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: floor [-d] MANIFEST MOUNTPOINT [fuse options]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof pattern; i++)
		pattern[i] = i % 64 == 63 ? '\n' : 'a' + i % 26;
	load(argv[1]);
	// fuse_parse_cmdline wants the mountpoint among its arguments.
	argv[1] = argv[0];
	struct fuse_args args = FUSE_ARGS_INIT(argc - 1, argv + 1);
	struct fuse_cmdline_opts o;
	if (fuse_parse_cmdline(&args, &o) != 0 || !o.mountpoint) {
		fprintf(stderr, "usage: floor [-d] MANIFEST MOUNTPOINT [fuse options]\n");
		return 2;
	}
	struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, NULL);
	if (!se || fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, o.mountpoint) != 0)
		return 1;
	fprintf(stderr, "floor: %zu names on %s\n", nnodes - 1, o.mountpoint);
	int r = fuse_session_loop(se);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	return r ? 1 : 0;
}
