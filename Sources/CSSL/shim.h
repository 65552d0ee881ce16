#ifndef FEEDSYNC_CSSL_SHIM_H
#define FEEDSYNC_CSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>

/* What Swift cannot call (OpenSSL's function-like macros), as functions. */

/* A key file that asks for a passphrase is refused, never prompted for on the terminal. */
static int feedsync_ssl_no_passphrase(char *buffer, int size, int writing, void *context) {
    (void)buffer; (void)size; (void)writing; (void)context;
    return 0;
}

/* TLS 1.2 at least; partial writes, and a write buffer that may move between retries
   (the listener retries a WANT_WRITE from wherever its bytes are); no renegotiation. */
static inline int feedsync_ssl_ctx_prepare(SSL_CTX *context) {
    if (SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) != 1) return 0;
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_default_passwd_cb(context, feedsync_ssl_no_passphrase);
    return 1;
}

/* Whether the error on top of the queue says a plain HTTP request came to a TLS port. */
static inline int feedsync_ssl_error_is_http_request(unsigned long code) {
    return ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_HTTP_REQUEST;
}

/* Whether an error says a private key is not the certificate's. */
static inline int feedsync_ssl_error_is_key_mismatch(unsigned long code) {
    return ERR_GET_LIB(code) == ERR_LIB_X509 && ERR_GET_REASON(code) == X509_R_KEY_VALUES_MISMATCH;
}
#endif
