// The agent's file routes: files as plain HTTP/2 bodies on the agent's socket, beside its gRPC
// service (served by go-agent/files.go, used by agent-files.ts). A file through
// ReadFile/WriteFileStream is cut into protobuf messages, each encoded, framed, decoded and copied
// on both sides; here the bytes go from the file descriptor to the stream and back as they are,
// which is what makes large transfers run at the speed of the disk. Paths are resolved
// and checked by the same filesystem calls as ReadFile and WriteFile, so the rules (symbolic links
// stay inside the sandbox, the agent's directory and the system directories are out of reach,
// writes go to a temporary file renamed at the end) are those of the Connect calls.
//
//   GET /aiem.agent.files/probe                      204: this agent has these routes
//   GET /aiem.agent.files/read?path=P                200, the bytes; header aiem-file-info
//   PUT /aiem.agent.files/write?path=P&create_parents=0|1&overwrite=0|1[&mode=N]
//                                                    body: the bytes, then the trailer
//                                                    aiem-complete: 1; 200, header aiem-file-info
//   GET /aiem.agent.files/read-descriptor?path=P    200 with headers only: aiem-descriptor (the
//                                                    agent's descriptor of the opened file, held
//                                                    until the client closes the stream),
//                                                    aiem-file-id, aiem-agent-pid, aiem-file-info
//   POST /aiem.agent.files/write-descriptor?path=P&create_parents=..&overwrite=..[&mode=N]
//                                                    200 with aiem-descriptor (the temporary file),
//                                                    aiem-file-id, aiem-agent-pid and, where files
//                                                    are limited, aiem-max-bytes; the client writes
//                                                    the file through the descriptor, then ends its
//                                                    side with the trailer aiem-complete: 1; the
//                                                    answer's trailers carry aiem-file-info, or
//                                                    the error headers
// The descriptor routes let the sandbox service, on the same host, open the file as
// /proc/<agent>/fd/<n> and move the bytes itself, with no copy through this process or HTTP/2:
// the agent still resolves and checks the path, creates the temporary file and renames it.
// aiem-file-id is `<st_dev>:<st_ino>`, so the opener can tell that it holds that very file.
// aiem-file-info is the FileInfo message, binary, in base64. A read of a file with a size sends
// that many bytes with a Content-Length, and resets the stream should the file shrink meanwhile
// (a short body is never passed off as the file); a file of size 0 (as /proc's are) is read to
// its end. A failure answers status 400 with headers aiem-error-code (the Connect code, a
// number) and aiem-error-message (URI-encoded), and no body.
export const FILE_ROUTES_PREFIX = "/aiem.agent.files/";
export const FILE_INFO_HEADER = "aiem-file-info";
export const ERROR_CODE_HEADER = "aiem-error-code";
export const ERROR_MESSAGE_HEADER = "aiem-error-message";
/** The trailer with which a client says a write's body is whole. */
export const COMPLETE_TRAILER = "aiem-complete";
export const DESCRIPTOR_HEADER = "aiem-descriptor";
export const FILE_ID_HEADER = "aiem-file-id";
export const AGENT_PID_HEADER = "aiem-agent-pid";
export const MAX_BYTES_HEADER = "aiem-max-bytes";
