/*
 * A Node-API addon of one function, loaded into the sandbox service: peerCredentials(fd) answers
 * the kernel's SO_PEERCRED of a connected unix socket, { pid, uid, gid }, as this process's
 * namespaces see them. For a connection to a listening socket that is the process that last
 * called listen() on it, and the credentials it had then (agent-client.ts checks that it is the
 * sandbox's agent). Node has no getsockopt of its own.
 *
 * Node-API is a stable C interface; the few declarations it needs are written here, so that no
 * headers have to be installed: the functions are Node's own, resolved when Node loads this file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef int napi_status; /* 0 is napi_ok */
typedef napi_value (*napi_callback)(napi_env env, napi_callback_info info);

extern napi_status napi_get_cb_info(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv,
                                    napi_value *this_arg, void **data);
extern napi_status napi_get_value_int32(napi_env env, napi_value value, int32_t *result);
extern napi_status napi_create_object(napi_env env, napi_value *result);
extern napi_status napi_create_int32(napi_env env, int32_t value, napi_value *result);
extern napi_status napi_create_uint32(napi_env env, uint32_t value, napi_value *result);
extern napi_status napi_set_named_property(napi_env env, napi_value object, const char *name, napi_value value);
extern napi_status napi_create_function(napi_env env, const char *name, size_t length, napi_callback cb, void *data,
                                        napi_value *result);
extern napi_status napi_throw_error(napi_env env, const char *code, const char *msg);

static napi_value peer_credentials(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd = -1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0 || argc < 1 ||
      napi_get_value_int32(env, argv[0], &fd) != 0) {
    napi_throw_error(env, "EINVAL", "peerCredentials(fd): a descriptor number is needed");
    return NULL;
  }
  struct ucred cred;
  socklen_t length = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) {
    napi_throw_error(env, "ESYSCALL", strerror(errno));
    return NULL;
  }
  napi_value result, pid, uid, gid;
  napi_create_object(env, &result);
  napi_create_int32(env, cred.pid, &pid);
  napi_create_uint32(env, cred.uid, &uid);
  napi_create_uint32(env, cred.gid, &gid);
  napi_set_named_property(env, result, "pid", pid);
  napi_set_named_property(env, result, "uid", uid);
  napi_set_named_property(env, result, "gid", gid);
  return result;
}

napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "peerCredentials", (size_t)-1, peer_credentials, NULL, &fn) == 0) {
    napi_set_named_property(env, exports, "peerCredentials", fn);
  }
  return exports;
}

int32_t node_api_module_get_api_version_v1(void) { return 8; }
