// Nettle's SHA-256 (Debian nettle-dev; libnettle8 is already a dependency of libmicrohttpd12
// through GnuTLS): the admin API fingerprints and compares bearer tokens by their digests.
#include <nettle/sha2.h>
