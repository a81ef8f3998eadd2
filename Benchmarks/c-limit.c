/*
 * The limit of our stack: libmicrohttpd serving fixed response bytes from memory, with the
 * same threading mode as menu-server (MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC, a thread
 * pool), the same daemon options as menu-server's defaults (timeout, connection and memory
 * limits, backlog, strict parsing) and the same keep-alive-preserving idiom (queue on the
 * second handler call).
 *
 *   cc -O2 -o c-limit c-limit.c -lmicrohttpd
 *   ./c-limit PORT THREADS BODY_FILE      (PORT 0 picks a free port; the line printed names it)
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *body;
static size_t body_size;
static int marker;

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls) {
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    if (*con_cls == NULL) { /* first call: headers only; answering now would cost keep-alive */
        *con_cls = &marker;
        return MHD_YES;
    }
    if (*upload_data_size != 0) { *upload_data_size = 0; return MHD_YES; }
    struct MHD_Response *response = MHD_create_response_from_buffer(body_size, body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(response, "Content-Type", "application/json; charset=utf-8");
    MHD_add_response_header(response, "Cache-Control", "no-store");
    enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return result;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s PORT THREADS BODY_FILE\n", argv[0]); return 2; }
    signal(SIGPIPE, SIG_IGN);
    FILE *file = fopen(argv[3], "rb");
    if (!file) { perror(argv[3]); return 2; }
    fseek(file, 0, SEEK_END);
    body_size = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    body = malloc(body_size ? body_size : 1);
    if (fread(body, 1, body_size, file) != body_size) { perror("read"); return 2; }
    fclose(file);
    unsigned int threads = (unsigned int)atoi(argv[2]);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC, (uint16_t)atoi(argv[1]), NULL, NULL, handle, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, threads > 1 ? threads : 0,
        /* menu-server's defaults, so both run libmicrohttpd configured alike */
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)1024,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)511,
        MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
        MHD_OPTION_END);
    if (!daemon) { fprintf(stderr, "c-limit: cannot start on port %s\n", argv[1]); return 1; }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    printf("c-limit listening on http://127.0.0.1:%u\n", info ? (unsigned)info->port : 0u);
    fflush(stdout);
    pause();
    MHD_stop_daemon(daemon);
    return 0;
}
