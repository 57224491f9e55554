/*
 * locker: locks known mutexes a known number of times, for lockcount's tests.
 *
 *   locker THREADS SHARED PRIVATE TRIES
 *
 * Prints "pid N", "shared ADDR", "private ADDR" a thread, "try ADDR",
 * "stats ADDR" (the block locker_stats points to) and "ready". Then, for each line on stdin:
 *   run      each thread locks the shared mutex SHARED times and its own
 *            PRIVATE times; the main thread trylocks "try" TRIES times; "done"
 *   fork K   a child locks its own mutex K times and exits;
 *            "child PID ADDR" once it has
 * and exits at the end of input.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int threads, shared_n, private_n, tries;
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t try = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t child = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *priv;
static volatile long counter;

/*
 * A global pointer to a heap block that holds the shared mutex's address,
 * as PHP's mysqlnd_global_stats holds its LOCK_access: what ReadPointee
 * reads. locker_null is never set.
 */
struct locker_stats {
	unsigned long *values;
	size_t count;
	pthread_mutex_t *lock;
};
struct locker_stats *locker_stats, *locker_null;

static void *work(void *arg)
{
	pthread_mutex_t *mine = arg;
	for (int i = 0; i < shared_n; i++) {
		pthread_mutex_lock(&shared);
		counter++;
		pthread_mutex_unlock(&shared);
	}
	for (int i = 0; i < private_n; i++) {
		pthread_mutex_lock(mine);
		pthread_mutex_unlock(mine);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: locker THREADS SHARED PRIVATE TRIES\n");
		return 2;
	}
	threads = atoi(argv[1]);
	shared_n = atoi(argv[2]);
	private_n = atoi(argv[3]);
	tries = atoi(argv[4]);
	priv = calloc(threads, sizeof *priv);
	locker_stats = calloc(1, sizeof *locker_stats);
	locker_stats->count = 4;
	locker_stats->values = calloc(locker_stats->count, sizeof *locker_stats->values);
	locker_stats->lock = &shared;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\nshared %p\n", (int)getpid(), (void *)&shared);
	for (int t = 0; t < threads; t++) {
		pthread_mutex_init(&priv[t], NULL);
		printf("private %p\n", (void *)&priv[t]);
	}
	printf("try %p\nstats %p\nready\n", (void *)&try, (void *)locker_stats);

	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		if (strcmp(line, "run\n") == 0) {
			pthread_t *tid = calloc(threads, sizeof *tid);
			for (int t = 0; t < threads; t++)
				pthread_create(&tid[t], NULL, work, &priv[t]);
			for (int t = 0; t < threads; t++)
				pthread_join(tid[t], NULL);
			free(tid);
			for (int i = 0; i < tries; i++)
				if (pthread_mutex_trylock(&try) == 0)
					pthread_mutex_unlock(&try);
			printf("done\n");
		} else if (strncmp(line, "fork ", 5) == 0) {
			int k = atoi(line + 5);
			pid_t pid = fork();
			if (pid == 0) {
				for (int i = 0; i < k; i++) {
					pthread_mutex_lock(&child);
					pthread_mutex_unlock(&child);
				}
				exit(0);
			}
			waitpid(pid, NULL, 0);
			printf("child %d %p\n", (int)pid, (void *)&child);
		}
	}
	return 0;
}
