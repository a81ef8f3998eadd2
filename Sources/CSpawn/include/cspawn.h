// The glibc extensions ChildProcess needs, which Swift's Glibc module does not export (they are
// declared only under _GNU_SOURCE / __USE_MISC). Defined in cspawn.c, compiled with _GNU_SOURCE.
#ifndef MENU_CSPAWN_H
#define MENU_CSPAWN_H

#include <spawn.h>

/// posix_spawn_file_actions_addchdir_np: the child changes to `path` before exec.
int cspawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path);

/// posix_spawn_file_actions_addclosefrom_np (glibc >= 2.34): the child closes every descriptor
/// >= `lowest` before exec. On other C libraries: returns ENOSYS.
int cspawn_add_closefrom(posix_spawn_file_actions_t *actions, int lowest);

/// pipe2(O_CLOEXEC): both ends close-on-exec, set atomically (no other thread's spawn can leak them).
int cspawn_pipe_cloexec(int ends[2]);

#endif
