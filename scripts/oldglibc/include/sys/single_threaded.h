/* glibc 2.32's header, which GCC 12's libstdc++ includes when it exists;
   zig's copy refuses targets before 2.32. The variable is in compat.c. */
extern char __libc_single_threaded;
