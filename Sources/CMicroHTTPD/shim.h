/*
 * shim.h — the C side of the HTTPServer target's libmicrohttpd binding.
 *
 * Swift cannot call C variadic functions, so every variadic libmicrohttpd
 * entry point that HTTPServer needs gets a fixed-arity `static inline` front
 * door here. Nothing in this file keeps state or allocates.
 *
 * Every name here starts with `httpserver_` (the target it serves) and knows
 * nothing of what the server is used for.
 *
 * Written against libmicrohttpd 0.9.75 (Debian 12, `libmicrohttpd-dev`).
 */
#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>
#ifdef __linux__
#include <netinet/tcp.h>
#endif

/* MHD_OPTION_STRICT_FOR_CLIENT exists since 0.9.60 (0x00096000). */
#if MHD_VERSION < 0x00096000
#error "libmicrohttpd >= 0.9.60 is required (MHD_OPTION_STRICT_FOR_CLIENT)"
#endif

/** How the listening socket is bound: chosen by the Swift side from the host literal. */
enum httpserver_mhd_address_mode {
    /** `struct sockaddr_in`, plain IPv4 socket. */
    HTTPSERVER_MHD_IPV4 = 0,
    /** `struct sockaddr_in6`, IPv6 socket with IPV6_V6ONLY (MHD_USE_IPv6). */
    HTTPSERVER_MHD_IPV6_ONLY = 1,
    /** `struct sockaddr_in6` for `::`, IPv6 socket also accepting IPv4 (MHD_USE_DUAL_STACK). */
    HTTPSERVER_MHD_DUAL_STACK = 2
};

/**
 * Daemon flags used by HTTPServer, in one place:
 *  - MHD_USE_POLL_INTERNAL_THREAD: poll(2) in MHD's own thread(s). NOT epoll and
 *    NOT MHD_USE_AUTO: on this platform 0.9.75's epoll mode stalls when exactly
 *    128 connections are ready at once.
 *  - MHD_USE_ITC: inter-thread channel, required by MHD_quiesce_daemon.
 *  - MHD_ALLOW_SUSPEND_RESUME: a handler whose answer waits on another thread
 *    (a deferred response) suspends its connection and resumes it when ready;
 *    MHD_stop_daemon must then find no connection suspended (it aborts otherwise).
 *  - MHD_USE_ERROR_LOG: messages go to the MHD_OPTION_EXTERNAL_LOGGER given to
 *    httpserver_mhd_start (never to stderr); HTTPServer only keeps start-up messages
 *    to explain a failed start.
 */
static inline unsigned int
httpserver_mhd_daemon_flags (enum httpserver_mhd_address_mode mode)
{
    unsigned int flags = (unsigned int) MHD_USE_POLL_INTERNAL_THREAD
                       | (unsigned int) MHD_USE_ITC
                       | (unsigned int) MHD_ALLOW_SUSPEND_RESUME
                       | (unsigned int) MHD_USE_ERROR_LOG;
    switch (mode) {
    case HTTPSERVER_MHD_IPV6_ONLY:
        flags |= (unsigned int) MHD_USE_IPv6;
        break;
    case HTTPSERVER_MHD_DUAL_STACK:
        flags |= (unsigned int) MHD_USE_DUAL_STACK;
        break;
    case HTTPSERVER_MHD_IPV4:
    default:
        break;
    }
    return flags;
}

/**
 * The callback of MHD_OPTION_URI_LOG_CALLBACK (microhttpd.h names no type for
 * it): called with the raw request target once the request line is parsed,
 * before the headers; what it returns is the request's first `*con_cls`.
 */
typedef void *(*httpserver_mhd_uri_logger) (void *cls, const char *uri, struct MHD_Connection *connection);

/**
 * Front door for the variadic MHD_start_daemon.
 *
 * The logger is installed first (as libmicrohttpd asks), then the
 * request-completed callback, the connection-notify callback (`notify` may be
 * NULL: then libmicrohttpd calls none), the request-target callback, the bind
 * address, and finally the caller's integer options as an MHD_OPTION_ARRAY
 * terminated by MHD_OPTION_END.
 * `bind_addr` (which carries the port actually bound) only needs to stay valid
 * for the duration of this call: 0.9.75 binds inside MHD_start_daemon. `port`
 * should equal the port in `bind_addr`; libmicrohttpd only quotes it in messages. Returns NULL on failure (the logger has then
 * been told why, when libmicrohttpd was built with messages).
 */
static inline struct MHD_Daemon *
httpserver_mhd_start (enum httpserver_mhd_address_mode mode,
                      uint16_t port,
                      MHD_LogCallback logger, void *logger_cls,
                      MHD_AccessHandlerCallback handler, void *handler_cls,
                      MHD_RequestCompletedCallback completed, void *completed_cls,
                      MHD_NotifyConnectionCallback notify, void *notify_cls,
                      httpserver_mhd_uri_logger uri_logger, void *uri_logger_cls,
                      const struct sockaddr *bind_addr,
                      const struct MHD_OptionItem *options)
{
    return MHD_start_daemon (httpserver_mhd_daemon_flags (mode),
                             port, /* only used in messages: bind_addr carries the port */
                             NULL, NULL,
                             handler, handler_cls,
                             MHD_OPTION_EXTERNAL_LOGGER, logger, logger_cls,
                             MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                             MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
                             MHD_OPTION_URI_LOG_CALLBACK, uri_logger, uri_logger_cls,
                             MHD_OPTION_SOCK_ADDR, bind_addr,
                             MHD_OPTION_ARRAY, options,
                             MHD_OPTION_END);
}

/**
 * Front door for the variadic MHD_get_daemon_info(MHD_DAEMON_INFO_BIND_PORT).
 * Returns the port the listening socket is really bound to (also when 0 was
 * asked for), or -1 if libmicrohttpd cannot tell.
 */
static inline int
httpserver_mhd_bound_port (struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info (daemon, MHD_DAEMON_INFO_BIND_PORT);
    if (NULL == info)
        return -1;
    return (int) info->port;
}

/**
 * Front door for the variadic MHD_get_daemon_info(MHD_DAEMON_INFO_CURRENT_CONNECTIONS).
 * Returns the number of open client connections (idle keep-alive ones
 * included), or -1 if libmicrohttpd cannot tell.
 */
static inline long
httpserver_mhd_current_connections (struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info (daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    if (NULL == info)
        return -1;
    return (long) info->num_connections;
}

/**
 * Front door for the variadic MHD_get_connection_info(MHD_CONNECTION_INFO_CLIENT_ADDRESS).
 * Copies the peer's address into the 16 bytes at `address` as an IPv6 address (an IPv4 peer
 * as ::ffff:a.b.c.d) and returns 1; returns 0 (leaving `address` alone) when libmicrohttpd
 * cannot tell or the peer is of another family.
 */
static inline int
httpserver_mhd_client_address (struct MHD_Connection *connection, uint8_t address[16])
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info (connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (NULL == info || NULL == info->client_addr)
        return 0;
    if (AF_INET == info->client_addr->sa_family) {
        const struct sockaddr_in *in = (const struct sockaddr_in *) info->client_addr;
        memset (address, 0, 10);
        address[10] = 0xff;
        address[11] = 0xff;
        memcpy (address + 12, &in->sin_addr, 4);
        return 1;
    }
    if (AF_INET6 == info->client_addr->sa_family) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) info->client_addr;
        memcpy (address, &in6->sin6_addr, 16);
        return 1;
    }
    return 0;
}

/**
 * Front door for the variadic MHD_get_connection_info(MHD_CONNECTION_INFO_SOCKET_CONTEXT).
 * Returns what the MHD_OPTION_NOTIFY_CONNECTION callback stored in
 * `*socket_context` at MHD_CONNECTION_NOTIFY_STARTED, or NULL.
 */
static inline void *
httpserver_mhd_socket_context (struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info (connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (NULL == info)
        return NULL;
    return info->socket_context;
}

/**
 * Front door for the variadic MHD_get_connection_info(MHD_CONNECTION_INFO_CONNECTION_FD).
 * Returns the connection's socket descriptor, or -1 if libmicrohttpd cannot tell.
 */
static inline int
httpserver_mhd_connection_fd (struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info (connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (NULL == info)
        return -1;
    return (int) info->connect_fd;
}

/**
 * Milliseconds since the TCP socket `fd` last received data (TCP_INFO's
 * tcpi_last_data_recv, kept by the kernel in jiffies), or -1 where that is not
 * available (not Linux, not TCP, or getsockopt failed).
 */
static inline long
httpserver_tcp_ms_since_data_received (int fd)
{
#ifdef __linux__
    struct tcp_info info;
    socklen_t length = (socklen_t) sizeof (info);
    if (0 != getsockopt (fd, IPPROTO_TCP, TCP_INFO, &info, &length)
        || length < (socklen_t) (offsetof (struct tcp_info, tcpi_last_data_recv)
                                 + sizeof (info.tcpi_last_data_recv)))
        return -1;
    return (long) info.tcpi_last_data_recv;
#else
    (void) fd;
    return -1;
#endif
}

/**
 * MHD_SIZE_UNKNOWN (a cast in a macro, which Swift does not import): the total size of a
 * response whose body is written while it is sent, chunked.
 */
static inline uint64_t
httpserver_mhd_size_unknown (void)
{
    return MHD_SIZE_UNKNOWN;
}

/** MHD_CONTENT_READER_END_OF_STREAM: a content reader's "the body is complete". */
static inline ssize_t
httpserver_mhd_reader_end_of_stream (void)
{
    return MHD_CONTENT_READER_END_OF_STREAM;
}

/** MHD_CONTENT_READER_END_WITH_ERROR: a content reader's "drop the connection". */
static inline ssize_t
httpserver_mhd_reader_end_with_error (void)
{
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

#endif /* CMICROHTTPD_SHIM_H */
