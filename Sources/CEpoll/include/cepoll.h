#ifndef CEPOLL_H
#define CEPOLL_H

/*
 * Linux epoll(7) and eventfd(2) for Swift, which Glibc's module does not export: fixed names
 * over the calls and flags one event loop needs (HTTPServer's stream sockets). Each function
 * returns what the system call returns (-1 with errno set on failure).
 */

#include <stdint.h>

/** The events a descriptor is watched for and reported with (epoll's own values). */
enum {
    CEPOLL_IN = 0x001,     /* EPOLLIN */
    CEPOLL_OUT = 0x004,    /* EPOLLOUT */
    CEPOLL_ERR = 0x008,    /* EPOLLERR */
    CEPOLL_HUP = 0x010,    /* EPOLLHUP */
    CEPOLL_RDHUP = 0x2000, /* EPOLLRDHUP */
    CEPOLL_ET = 1u << 31   /* EPOLLET */
};

/** One ready descriptor: its events and the token it was added with. */
typedef struct {
    uint32_t events;
    uint64_t token;
} cepoll_ready;

/** epoll_create1(EPOLL_CLOEXEC). */
int cepoll_create(void);
/** epoll_ctl(EPOLL_CTL_ADD) of `fd` for `events`, reported with `token`. */
int cepoll_add(int epoll, int fd, uint32_t events, uint64_t token);
/** epoll_wait into `ready` (at most `capacity`, at most 256 at a time); `timeout_ms` -1 waits. */
int cepoll_wait(int epoll, cepoll_ready *ready, int capacity, int timeout_ms);
/** eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK). */
int cepoll_eventfd(void);

#endif /* CEPOLL_H */
