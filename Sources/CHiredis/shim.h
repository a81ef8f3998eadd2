/*
 * shim.h — the C side of the RedisClient target's hiredis binding.
 *
 * Swift cannot call C variadic functions (redisCommand, redisAppendCommand), and
 * those format with printf directives, which are not binary safe. RedisClient
 * therefore uses only the argv entry points (redisCommandArgv,
 * redisAppendCommandArgv + redisGetReply), and the fixed-arity `static inline`
 * front doors here take timeouts in milliseconds instead of `struct timeval`.
 * Nothing in this file keeps state or allocates beyond what hiredis allocates.
 *
 * Every name here starts with `chiredis_`.
 *
 * Written against hiredis 0.14 (Debian 12, `libhiredis-dev`): RESP2 only, no
 * push replies; `redisConnectWithTimeout` sets only the connect timeout, so
 * every connect is followed by `redisSetTimeout` (chiredis_set_timeout).
 */
#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H

#include <stddef.h>
#include <sys/time.h>
#include <hiredis.h>

static inline struct timeval chiredis_timeval(long milliseconds) {
    struct timeval tv;
    tv.tv_sec = milliseconds / 1000;
    tv.tv_usec = (milliseconds % 1000) * 1000;
    return tv;
}

/** Connects over TCP, waiting at most `milliseconds` for the connection. Never NULL unless out of memory; check `err`. */
static inline redisContext *chiredis_connect_tcp(const char *host, int port, long milliseconds) {
    return redisConnectWithTimeout(host, port, chiredis_timeval(milliseconds));
}

/** Connects to a unix socket, waiting at most `milliseconds`. Never NULL unless out of memory; check `err`. */
static inline redisContext *chiredis_connect_unix(const char *path, long milliseconds) {
    return redisConnectUnixWithTimeout(path, chiredis_timeval(milliseconds));
}

/** Sets the read and write timeout of every later call (SO_RCVTIMEO, SO_SNDTIMEO). REDIS_OK or REDIS_ERR. */
static inline int chiredis_set_timeout(redisContext *context, long milliseconds) {
    return redisSetTimeout(context, chiredis_timeval(milliseconds));
}

/** The `index`th element of an array reply. */
static inline redisReply *chiredis_reply_element(const redisReply *reply, size_t index) {
    return reply->element[index];
}

#endif
