// Files as plain HTTP/2 bodies on the agent's socket, beside the gRPC service: the bytes go from
// the file to the stream and back as they are, and the descriptor routes let the sandbox
// service (on the same host) open the agent's descriptor of the file and move the bytes itself.
// The routes and their headers are those of services/sandbox/src/runtime/file-routes.ts, whose
// header comment describes them; paths are checked by the same filesystem calls as ReadFile and
// WriteFile.
package main

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	filesPrefix        = "/aiem.agent.files/"
	fileInfoHeader     = "aiem-file-info"
	errorCodeHeader    = "aiem-error-code"
	errorMessageHeader = "aiem-error-message"
	completeTrailer    = "aiem-complete"
	descriptorHeader   = "aiem-descriptor"
	fileIDHeader       = "aiem-file-id"
	agentPidHeader     = "aiem-agent-pid"
	maxBytesHeader     = "aiem-max-bytes"
	// descriptorHold bounds how long a descriptor waits for a client that never closes.
	descriptorHold = 30 * time.Second
)

func flag(q url.Values, name string) (bool, error) {
	switch q.Get(name) {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	}
	return false, errorf(codeInvalidArgument, "%s: must be 0 or 1", name)
}

func modeOf(q url.Values) (*uint32, error) {
	if !q.Has("mode") {
		return nil, nil
	}
	v, err := strconv.ParseInt(q.Get("mode"), 10, 64)
	if err != nil {
		return nil, errorf(codeInvalidArgument, "mode: must be a number")
	}
	if v < 0 || v > 0o7777 {
		return nil, errorf(codeInvalidArgument, "mode: must be between 0 and octal 07777")
	}
	m := uint32(v)
	return &m, nil
}

func writeOptions(q url.Values) (createParents, overwrite bool, mode *uint32, err error) {
	if createParents, err = flag(q, "create_parents"); err != nil {
		return
	}
	if overwrite, err = flag(q, "overwrite"); err != nil {
		return
	}
	mode, err = modeOf(q)
	return
}

func fileInfoValue(info fileInfo) string { return base64.StdEncoding.EncodeToString(info.encode()) }

func fileID(st *syscall.Stat_t) string {
	return strconv.FormatUint(st.Dev, 10) + ":" + strconv.FormatUint(st.Ino, 10)
}

// uriEncode encodes as JavaScript's encodeURIComponent, which the client decodes.
func uriEncode(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

func sendFileError(w http.ResponseWriter, err error, headersSent bool) {
	if headersSent {
		// The status line is gone: a reset tells the client the body is not whole.
		panic(http.ErrAbortHandler)
	}
	re := asRPCError(nil, err)
	w.Header().Set(errorCodeHeader, strconv.Itoa(re.code))
	w.Header().Set(errorMessageHeader, uriEncode(re.msg))
	w.WriteHeader(http.StatusBadRequest)
}

func (a *agent) serveFiles(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, filesPrefix)
	q := r.URL.Query()
	switch {
	case name == "probe" && r.Method == http.MethodGet:
		w.WriteHeader(http.StatusNoContent)
	case name == "read" && r.Method == http.MethodGet:
		a.readRoute(w, q)
	case name == "write" && r.Method == http.MethodPut:
		a.writeRoute(w, r, q)
	case name == "read-descriptor" && r.Method == http.MethodGet:
		a.readDescriptorRoute(w, r, q)
	case name == "write-descriptor" && r.Method == http.MethodPost:
		a.writeDescriptorRoute(w, r, q)
	default:
		sendFileError(w, errorf(codeUnimplemented, "no route for %s %s", r.Method, r.URL.Path), false)
	}
}

// turnReader reads in turns at blocking work, one read at a time, so that a slow client never
// holds a turn.
type turnReader struct{ r io.Reader }

func (t turnReader) Read(p []byte) (int, error) {
	done := blocking()
	defer done()
	return t.r.Read(p)
}

// openForRead opens a file in a turn at blocking work.
func (a *agent) openForRead(path string) (*os.File, string, *syscall.Stat_t, error) {
	done := blocking()
	defer done()
	return a.fs.openForRead(path)
}

func (a *agent) readRoute(w http.ResponseWriter, q url.Values) {
	file, display, st, err := a.openForRead(q.Get("path"))
	if err != nil {
		sendFileError(w, err, false)
		return
	}
	defer file.Close()
	w.Header().Set("content-type", "application/octet-stream")
	w.Header().Set(fileInfoHeader, fileInfoValue(toFileInfo(display, st)))
	var src io.Reader = turnReader{file}
	if st.Size > 0 {
		w.Header().Set("content-length", strconv.FormatInt(st.Size, 10))
		src = io.LimitReader(src, st.Size)
	}
	w.WriteHeader(http.StatusOK)
	n, err := io.CopyBuffer(w, src, make([]byte, 1<<20))
	if err != nil || (st.Size > 0 && n < st.Size) {
		// A short body is never passed off as the file.
		panic(http.ErrAbortHandler)
	}
}

func (a *agent) writeRoute(w http.ResponseWriter, r *http.Request, q url.Values) {
	createParents, overwrite, mode, err := writeOptions(q)
	if err != nil {
		sendFileError(w, err, false)
		return
	}
	fill := func(file *os.File, display string) error {
		var total int64
		buf := make([]byte, 1<<20)
		for {
			n, err := io.ReadFull(r.Body, buf)
			total += int64(n)
			if a.fs.maxFileBytes > 0 && total > a.fs.maxFileBytes {
				return errorf(codeResourceExhausted, "%s: larger than the sandbox's file size limit of %d bytes", display, a.fs.maxFileBytes)
			}
			if n > 0 {
				done := blocking()
				_, werr := file.Write(buf[:n])
				done()
				if werr != nil {
					return werr
				}
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				break
			}
			if err != nil {
				return bodyEnd(r, err, "upload")
			}
		}
		return bodyEnd(r, nil, "upload")
	}
	info, err := a.fs.writeFile(q.Get("path"), fill, createParents, overwrite, mode)
	if err != nil {
		sendFileError(w, err, false)
		return
	}
	w.Header().Set(fileInfoHeader, fileInfoValue(info))
	w.WriteHeader(http.StatusOK)
}

// bodyEnd says how a file's body ended, given the error its reading ended with: a body cut short,
// or one the client did not mark whole, is the client cancelling the `what` (and must not be
// renamed into place).
func bodyEnd(r *http.Request, readErr error, what string) error {
	if readErr != nil || r.Trailer.Get(completeTrailer) != "1" {
		return errorf(codeCanceled, "the %s was cancelled before its end", what)
	}
	return nil
}

// closedByClient returns once the client has closed the stream, or after the longest hold.
func closedByClient(r *http.Request) {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, r.Body)
		close(done)
	}()
	select {
	case <-r.Context().Done():
	case <-time.After(descriptorHold):
	}
}

func (a *agent) readDescriptorRoute(w http.ResponseWriter, r *http.Request, q url.Values) {
	file, display, st, err := a.openForRead(q.Get("path"))
	if err != nil {
		sendFileError(w, err, false)
		return
	}
	defer file.Close()
	h := w.Header()
	h.Set(descriptorHeader, strconv.Itoa(int(file.Fd())))
	h.Set(fileIDHeader, fileID(st))
	h.Set(agentPidHeader, strconv.Itoa(os.Getpid()))
	h.Set(fileInfoHeader, fileInfoValue(toFileInfo(display, st)))
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	closedByClient(r)
}

func (a *agent) writeDescriptorRoute(w http.ResponseWriter, r *http.Request, q url.Values) {
	createParents, overwrite, mode, err := writeOptions(q)
	if err != nil {
		sendFileError(w, err, false)
		return
	}
	headersSent := false
	fill := func(file *os.File, display string) error {
		st, err := fstat(int(file.Fd()))
		if err != nil {
			return err
		}
		h := w.Header()
		h.Set(descriptorHeader, strconv.Itoa(int(file.Fd())))
		h.Set(fileIDHeader, fileID(st))
		h.Set(agentPidHeader, strconv.Itoa(os.Getpid()))
		if a.fs.maxFileBytes > 0 {
			h.Set(maxBytesHeader, strconv.FormatInt(a.fs.maxFileBytes, 10))
		}
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		headersSent = true
		// No body is expected; anything sent is read and dropped so that the end comes.
		_, err = io.Copy(io.Discard, r.Body)
		return bodyEnd(r, err, "write")
	}
	info, err := a.fs.writeFile(q.Get("path"), fill, createParents, overwrite, mode)
	if err != nil {
		if !headersSent {
			sendFileError(w, err, false)
			return
		}
		// The client holds the answer's head already: the refusal comes as trailers.
		re := asRPCError(nil, err)
		w.Header().Set(http.TrailerPrefix+errorCodeHeader, strconv.Itoa(re.code))
		w.Header().Set(http.TrailerPrefix+errorMessageHeader, uriEncode(re.msg))
		return
	}
	w.Header().Set(http.TrailerPrefix+fileInfoHeader, fileInfoValue(info))
}
