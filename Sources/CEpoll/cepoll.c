#include "cepoll.h"

#ifdef __linux__

#include <sys/epoll.h>
#include <sys/eventfd.h>

_Static_assert(CEPOLL_IN == EPOLLIN && CEPOLL_OUT == EPOLLOUT && CEPOLL_ERR == EPOLLERR
                   && CEPOLL_HUP == EPOLLHUP && CEPOLL_RDHUP == EPOLLRDHUP
                   && CEPOLL_ET == (uint32_t) EPOLLET,
               "cepoll.h's flags are epoll's");

int
cepoll_create (void)
{
    return epoll_create1 (EPOLL_CLOEXEC);
}

int
cepoll_add (int epoll, int fd, uint32_t events, uint64_t token)
{
    struct epoll_event event = { .events = events, .data.u64 = token };
    return epoll_ctl (epoll, EPOLL_CTL_ADD, fd, &event);
}

int
cepoll_wait (int epoll, cepoll_ready *ready, int capacity, int timeout_ms)
{
    struct epoll_event events[256];
    int count = epoll_wait (epoll, events, capacity < 256 ? capacity : 256, timeout_ms);
    for (int i = 0; i < count; i++) {
        ready[i].events = events[i].events;
        ready[i].token = events[i].data.u64;
    }
    return count;
}

int
cepoll_eventfd (void)
{
    return eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
}

#else /* not Linux: no epoll; every call fails with ENOSYS */

#include <errno.h>

int cepoll_create (void) { errno = ENOSYS; return -1; }
int cepoll_add (int epoll, int fd, uint32_t events, uint64_t token) { (void) epoll; (void) fd; (void) events; (void) token; errno = ENOSYS; return -1; }
int cepoll_wait (int epoll, cepoll_ready *ready, int capacity, int timeout_ms) { (void) epoll; (void) ready; (void) capacity; (void) timeout_ms; errno = ENOSYS; return -1; }
int cepoll_eventfd (void) { errno = ENOSYS; return -1; }

#endif /* __linux__ */
