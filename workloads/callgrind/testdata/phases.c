/* phases: work in three phases separated by usleep(0), so that callgrind's
 * --dump-before=usleep cuts its counts there. Phase i runs i*N loop
 * iterations of the same body: the dumps must grow linearly. */
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

static void work(long n) {
	for (long i = 0; i < n; i++)
		sink = sink * 31 + (unsigned long)i;
}

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 100000;
	work(n);
	usleep(0);
	work(2 * n);
	usleep(0);
	work(3 * n);
	usleep(0);
	return 0;
}
