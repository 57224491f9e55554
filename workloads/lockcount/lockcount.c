//go:build ignore

// The constraint keeps the go tool from treating this file as cgo source:
// the Go package embeds it and gcc compiles it (see Build).

/*
 * lockcount: an LD_PRELOAD library that counts pthread_mutex_lock and
 * pthread_mutex_trylock calls per mutex address.
 *
 * With LOCKCOUNT_DIR set, each process (and each child after fork, and each
 * image after exec) creates LOCKCOUNT_DIR/lockcount.<pid>.<start-ns>.bin and
 * maps it MAP_SHARED: the counting table lives in that file, so another
 * process reads the live counts at any moment, without signals (Apache
 * blocks them in its worker threads) and whether or not the process ever
 * exits cleanly. At exit a text dump, lockcount.<pid>.<start-ns>.txt, is
 * written next to it: "address locks trylocks first-thread shared" lines,
 * then "overflow locks trylocks" and "total locks trylocks".
 *
 * The table is a fixed-size open-addressing hash table updated with relaxed
 * atomics only; a mutex that finds no free slot is counted in the header's
 * overflow counters. Calls before the library's constructor ran are
 * forwarded but not counted.
 *
 * Each slot also says whether one thread or many lock its mutex: the
 * thread that first locked or trylocked it (its kernel thread id), and a
 * shared flag that the first call from any other thread sets, for good.
 * Threads are told apart by id, so a mutex whose first thread exited and
 * whose next locker is a new thread counts as shared, as does a heap
 * mutex freed by one thread and reallocated at the same address by
 * another: shared means locked by more than one thread in the process's
 * life, the precondition of contention, not contention itself.
 *
 * Binary layout (native byte order), version 2:
 *   header, 64 bytes: magic "LOCKCNT1", u32 version, u32 slots, u64 pid,
 *     u64 start time (ns since the epoch), u64 overflow locks,
 *     u64 overflow trylocks, 2 × u64 reserved
 *   slots × 32 bytes: u64 address (0: free), u64 locks, u64 trylocks,
 *     u32 first thread id (0: not yet written), u32 flags (bit 0: shared)
 * Version 1 had 24-byte slots, without the thread id and flags.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LC_MAGIC "LOCKCNT1"
#define LC_VERSION 2
#define LC_SLOT_BITS 16
#define LC_SLOTS (1u << LC_SLOT_BITS)
#define LC_MAX_PROBE 4096
#define LC_SHARED 1u

struct lc_slot {
	_Atomic uint64_t addr;
	_Atomic uint64_t locks;
	_Atomic uint64_t trylocks;
	_Atomic uint32_t first_tid;
	_Atomic uint32_t flags;
};

struct lc_table {
	char magic[8];
	uint32_t version;
	uint32_t slots;
	uint64_t pid;
	uint64_t start_ns;
	_Atomic uint64_t overflow_locks;
	_Atomic uint64_t overflow_trylocks;
	uint64_t reserved[2];
	struct lc_slot slot[LC_SLOTS];
};

_Static_assert(sizeof(struct lc_slot) == 32, "slot layout");
_Static_assert(offsetof(struct lc_slot, first_tid) == 24, "slot layout");
_Static_assert(offsetof(struct lc_slot, flags) == 28, "slot layout");
_Static_assert(offsetof(struct lc_table, slot) == 64, "header layout");

typedef int (*lc_lock_fn)(pthread_mutex_t *);

static _Atomic(struct lc_table *) lc_table;
static char lc_base[4096]; /* path without the .bin/.txt suffix */
static _Atomic(lc_lock_fn) lc_real_lock, lc_real_trylock;

/*
 * dlsym may, in some C libraries, lock a mutex through the public symbol
 * and so re-enter us before it has returned the real one. The thread that
 * is resolving then takes glibc's own alias instead.
 */
static __thread int lc_resolving __attribute__((tls_model("initial-exec")));
extern int __pthread_mutex_lock(pthread_mutex_t *) __attribute__((weak));
extern int __pthread_mutex_trylock(pthread_mutex_t *) __attribute__((weak));

/*
 * The calling thread's kernel id, 0 until its first counted call: a system
 * call once per thread instead of once per lock. syscall() rather than
 * gettid(), which glibc has only since 2.30. Reset in a child after fork,
 * whose one thread has an id of its own.
 */
static __thread uint32_t lc_tid __attribute__((tls_model("initial-exec")));

static uint32_t lc_self(void)
{
	uint32_t tid = lc_tid;
	if (__builtin_expect(tid == 0, 0))
		lc_tid = tid = (uint32_t)syscall(SYS_gettid);
	return tid;
}

/*
 * lc_thread notes the calling thread on slot s. A thread locking a mutex
 * it first locked, the common case, costs a thread-local read and one
 * relaxed load of the line that the count then writes anyway; a shared
 * mutex's flag is read before it is written, so that the flag costs no
 * write after the first.
 */
static void lc_thread(struct lc_slot *s)
{
	uint32_t self = lc_self();
	uint32_t first = atomic_load_explicit(&s->first_tid, memory_order_relaxed);
	if (__builtin_expect(first == self, 1))
		return;
	if (first == 0 && atomic_compare_exchange_strong_explicit(&s->first_tid, &first, self,
			memory_order_relaxed, memory_order_relaxed))
		return;
	/* first is another thread's, whether read or lost the race to. */
	if (!(atomic_load_explicit(&s->flags, memory_order_relaxed) & LC_SHARED))
		atomic_fetch_or_explicit(&s->flags, LC_SHARED, memory_order_relaxed);
}

static void lc_die(const char *msg)
{
	ssize_t r = write(2, msg, strlen(msg));
	(void)r;
	abort();
}

static lc_lock_fn lc_resolve(_Atomic(lc_lock_fn) *slot, const char *name, lc_lock_fn fallback)
{
	lc_lock_fn f = atomic_load_explicit(slot, memory_order_acquire);
	if (f)
		return f;
	if (lc_resolving) {
		if (!fallback)
			lc_die("lockcount: re-entered while resolving the real mutex functions\n");
		return fallback;
	}
	lc_resolving = 1;
	f = (lc_lock_fn)dlsym(RTLD_NEXT, name);
	lc_resolving = 0;
	if (!f)
		f = fallback;
	if (!f)
		lc_die("lockcount: cannot find the real mutex functions\n");
	atomic_store_explicit(slot, f, memory_order_release);
	return f;
}

static void lc_count(const void *m, int try)
{
	struct lc_table *t = atomic_load_explicit(&lc_table, memory_order_acquire);
	uint64_t key = (uint64_t)(uintptr_t)m;
	if (!t || key == 0)
		return;
	uint32_t i = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - LC_SLOT_BITS));
	for (uint32_t n = 0; n < LC_MAX_PROBE; n++, i = (i + 1) & (LC_SLOTS - 1)) {
		struct lc_slot *s = &t->slot[i];
		uint64_t cur = atomic_load_explicit(&s->addr, memory_order_relaxed);
		if (cur == 0) {
			uint64_t expected = 0;
			if (atomic_compare_exchange_strong_explicit(&s->addr, &expected, key,
					memory_order_relaxed, memory_order_relaxed))
				cur = key;
			else
				cur = expected;
		}
		if (cur == key) {
			lc_thread(s);
			atomic_fetch_add_explicit(try ? &s->trylocks : &s->locks, 1, memory_order_relaxed);
			return;
		}
	}
	atomic_fetch_add_explicit(try ? &t->overflow_trylocks : &t->overflow_locks, 1, memory_order_relaxed);
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	lc_lock_fn f = lc_resolve(&lc_real_lock, "pthread_mutex_lock", __pthread_mutex_lock);
	lc_count(m, 0);
	return f(m);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	lc_lock_fn f = lc_resolve(&lc_real_trylock, "pthread_mutex_trylock", __pthread_mutex_trylock);
	lc_count(m, 1);
	return f(m);
}

/* lc_open creates and maps this process's table; on failure it says why
 * on stderr and leaves counting off. */
static void lc_open(void)
{
	const char *dir = getenv("LOCKCOUNT_DIR");
	if (!dir || !*dir)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t start = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	int n = snprintf(lc_base, sizeof lc_base, "%s/lockcount.%ld.%llu", dir, (long)getpid(),
			 (unsigned long long)start);
	if (n < 0 || (size_t)n + 5 > sizeof lc_base) {
		lc_base[0] = 0;
		return;
	}
	char path[sizeof lc_base + 4];
	snprintf(path, sizeof path, "%s.bin", lc_base);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		dprintf(2, "lockcount: create %s: %s\n", path, strerror(errno));
		lc_base[0] = 0;
		return;
	}
	/* Readable by the reader whatever the server's umask. */
	fchmod(fd, 0644);
	void *p = MAP_FAILED;
	if (ftruncate(fd, sizeof(struct lc_table)) == 0)
		p = mmap(NULL, sizeof(struct lc_table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		dprintf(2, "lockcount: map %s: %s\n", path, strerror(errno));
		close(fd);
		unlink(path);
		lc_base[0] = 0;
		return;
	}
	close(fd);
	struct lc_table *t = p;
	t->version = LC_VERSION;
	t->slots = LC_SLOTS;
	t->pid = (uint64_t)getpid();
	t->start_ns = start;
	/* The magic last: a reader that sees it sees a complete header. */
	atomic_thread_fence(memory_order_release);
	memcpy(t->magic, LC_MAGIC, 8);
	atomic_store_explicit(&lc_table, t, memory_order_release);
}

/* After fork the child still maps its parent's table: give it its own. */
static void lc_after_fork_child(void)
{
	struct lc_table *t = atomic_exchange_explicit(&lc_table, NULL, memory_order_acq_rel);
	if (t)
		munmap(t, sizeof *t);
	lc_tid = 0;
	lc_open();
}

__attribute__((constructor)) static void lc_init(void)
{
	lc_resolve(&lc_real_lock, "pthread_mutex_lock", __pthread_mutex_lock);
	lc_resolve(&lc_real_trylock, "pthread_mutex_trylock", __pthread_mutex_trylock);
	lc_open();
	pthread_atfork(NULL, NULL, lc_after_fork_child);
}

/* lc_put appends the decimal or hex form of v to buf at *n. */
static void lc_put(char *buf, size_t *n, uint64_t v, int hex)
{
	char tmp[24];
	int i = 0;
	do {
		tmp[i++] = "0123456789abcdef"[v % (hex ? 16 : 10)];
		v /= hex ? 16 : 10;
	} while (v);
	if (hex) {
		buf[(*n)++] = '0';
		buf[(*n)++] = 'x';
	}
	while (i)
		buf[(*n)++] = tmp[--i];
}

/* lc_line writes "label locks trylocks", or with no label a mutex's line,
 * "address locks trylocks first-thread shared". */
static void lc_line(int fd, const char *label, uint64_t a, uint64_t locks, uint64_t trylocks,
		    uint32_t tid, uint32_t flags)
{
	char buf[128];
	size_t n = 0;
	if (label) {
		memcpy(buf, label, strlen(label));
		n = strlen(label);
	} else {
		lc_put(buf, &n, a, 1);
	}
	buf[n++] = ' ';
	lc_put(buf, &n, locks, 0);
	buf[n++] = ' ';
	lc_put(buf, &n, trylocks, 0);
	if (!label) {
		buf[n++] = ' ';
		lc_put(buf, &n, tid, 0);
		buf[n++] = ' ';
		buf[n++] = flags & LC_SHARED ? '1' : '0';
	}
	buf[n++] = '\n';
	ssize_t r = write(fd, buf, n);
	(void)r;
}

/* At exit, the text dump: what the table holds at that moment. */
__attribute__((destructor)) static void lc_dump(void)
{
	struct lc_table *t = atomic_load_explicit(&lc_table, memory_order_acquire);
	if (!t || !lc_base[0])
		return;
	char path[sizeof lc_base + 4];
	snprintf(path, sizeof path, "%s.txt", lc_base);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	fchmod(fd, 0644);
	char head[128];
	int hn = snprintf(head, sizeof head, "# lockcount pid %llu\n# address locks trylocks first-thread shared\n",
			  (unsigned long long)t->pid);
	ssize_t r = write(fd, head, (size_t)hn);
	(void)r;
	uint64_t locks = 0, trylocks = 0;
	for (uint32_t i = 0; i < LC_SLOTS; i++) {
		uint64_t a = atomic_load_explicit(&t->slot[i].addr, memory_order_relaxed);
		if (!a)
			continue;
		uint64_t l = atomic_load_explicit(&t->slot[i].locks, memory_order_relaxed);
		uint64_t tl = atomic_load_explicit(&t->slot[i].trylocks, memory_order_relaxed);
		uint32_t tid = atomic_load_explicit(&t->slot[i].first_tid, memory_order_relaxed);
		uint32_t fl = atomic_load_explicit(&t->slot[i].flags, memory_order_relaxed);
		lc_line(fd, NULL, a, l, tl, tid, fl);
		locks += l;
		trylocks += tl;
	}
	uint64_t ol = atomic_load_explicit(&t->overflow_locks, memory_order_relaxed);
	uint64_t ot = atomic_load_explicit(&t->overflow_trylocks, memory_order_relaxed);
	lc_line(fd, "overflow", 0, ol, ot, 0, 0);
	lc_line(fd, "total", 0, locks + ol, trylocks + ot, 0, 0);
	close(fd);
}
