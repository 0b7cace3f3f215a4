/* The two glibc symbols newer than 2.28 that Debian 12's static FAISS and
   GCC 12's libstdc++.a use. Weak, and with the meaning glibc gives them. */
#include <stdint.h>
#include <sys/random.h>

/* 0: never assume the process is single-threaded, so libstdc++ always
   uses atomic reference counts (glibc sets it to 1 only until a thread
   starts). */
__attribute__((weak)) char __libc_single_threaded = 0;

/* std::random_device: glibc 2.36 added arc4random; getrandom is 2.25. */
__attribute__((weak)) uint32_t arc4random(void)
{
	uint32_t v = 0;
	while (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
	}
	return v;
}
