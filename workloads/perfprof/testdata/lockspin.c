// lockspin: four threads take one mutex in turn as fast as they can, with
// a little arithmetic between, so that a profile of it is mostly lock
// time: the mutex's fast path, and the futex syscalls of contention.
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long counter;

static void *work(void *arg) {
	unsigned long x = (unsigned long)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
		for (int i = 0; i < 50; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		if (x == 42)
			printf("%lu\n", x);
	}
	return NULL;
}

int main(void) {
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
