/* The WebSocket handshake's Sec-WebSocket-Accept (RFC 6455 section 4.2.2):
 * base64(SHA-1(key + GUID)), with OpenSSL's libcrypto. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "k8s_int.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

void tb_k8s_ws_accept(const char *key, char *out)
{
	char text[128];
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;

	snprintf(text, sizeof text, "%s%s", key, WS_GUID);
	if (!EVP_Digest(text, strlen(text), digest, &dlen, EVP_sha1(), NULL) ||
	    dlen != 20) {
		out[0] = '\0';
		return;
	}
	EVP_EncodeBlock((unsigned char *)out, digest, (int)dlen);
}

void tb_k8s_ws_key(const unsigned char *nonce16, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, nonce16, 16);
}
