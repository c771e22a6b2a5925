// Turns operating-system errors into API errors whose messages name sandbox paths only: the
// host paths the agent works with (`/proc/self/fd/...`, or the root directory in unconfined mode)
// never reach a client.
import { Code, ConnectError } from "@connectrpc/connect";

export function errnoCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}

/** A ConnectError for a failed filesystem system call on the sandbox path `path`. */
export function fsError(error: unknown, path: string): ConnectError {
  if (error instanceof ConnectError) return error;
  const code = errnoCode(error);
  switch (code) {
    case "ENOENT":
      return new ConnectError(`${path}: no such file or directory`, Code.NotFound);
    case "EEXIST":
      return new ConnectError(`${path}: already exists`, Code.AlreadyExists);
    case "ENOTDIR":
      return new ConnectError(`${path}: a parent is not a directory`, Code.FailedPrecondition);
    case "EISDIR":
      return new ConnectError(`${path}: is a directory`, Code.FailedPrecondition);
    case "ENOTEMPTY":
      return new ConnectError(`${path}: directory is not empty`, Code.FailedPrecondition);
    case "ELOOP":
      return new ConnectError(`${path}: too many levels of symbolic links`, Code.FailedPrecondition);
    case "EXDEV":
      return new ConnectError(`${path}: cannot move across filesystems`, Code.FailedPrecondition);
    case "EBUSY":
      return new ConnectError(`${path}: is in use by the system`, Code.PermissionDenied);
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return new ConnectError(`${path}: permission denied`, Code.PermissionDenied);
    case "ENOSPC":
    case "EDQUOT":
    case "EFBIG":
      return new ConnectError(`${path}: the sandbox's storage is full`, Code.ResourceExhausted);
    case "EINVAL":
      return new ConnectError(`${path}: invalid argument`, Code.InvalidArgument);
    case "ENAMETOOLONG":
      return new ConnectError(`${path}: name too long`, Code.InvalidArgument);
    default:
      return new ConnectError(`${path}: ${code ?? "unexpected error"}`, Code.Internal);
  }
}

export function notFound(message: string): ConnectError {
  return new ConnectError(message, Code.NotFound);
}

export function invalidArgument(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

export function failedPrecondition(message: string): ConnectError {
  return new ConnectError(message, Code.FailedPrecondition);
}

export function permissionDenied(message: string): ConnectError {
  return new ConnectError(message, Code.PermissionDenied);
}

export function alreadyExists(message: string): ConnectError {
  return new ConnectError(message, Code.AlreadyExists);
}
