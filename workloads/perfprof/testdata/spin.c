// spin: one thread of arithmetic, no locks, no syscalls: a profile of it
// has next to no lock time.
#include <stdio.h>

int main(void) {
	volatile unsigned long x = 1;
	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		if (x == 42)
			printf("%lu\n", x);
	}
	return 0;
}
