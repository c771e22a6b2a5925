// The append-only output log of one process. Every chunk keeps the stream it was written to and
// its offset: the number of bytes of both streams written before it. The log keeps at most
// `limit` bytes; beyond that the oldest bytes are discarded and counted, so readers can say
// exactly what they missed, and resuming a stream by offset is exact.
package main

import "sync"

const (
	streamStdout = 1
	streamStderr = 2
	// streamCombined selects both streams in ReadOutput.
	streamCombined = 3
)

type logChunk struct {
	stream int
	offset int64
	data   []byte
}

type outputLog struct {
	mu        sync.Mutex
	limit     int64
	chunks    []logChunk
	head      int
	start     int64
	end       int64
	kept      int64
	sealed    bool
	droppedBy [3]int64
	changed   chan struct{}
}

func newOutputLog(limit int64) *outputLog {
	return &outputLog{limit: limit, changed: make(chan struct{})}
}

// wake tells every waiter that the log changed; the caller holds mu.
func (l *outputLog) wake() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// state is a consistent view of the log's bounds and a channel closed on its next change.
func (l *outputLog) state() (start, end int64, sealed bool, changed <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.start, l.end, l.sealed, l.changed
}

func (l *outputLog) append(stream int, data []byte) {
	if len(data) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sealed {
		return
	}
	l.chunks = append(l.chunks, logChunk{stream: stream, offset: l.end, data: data})
	l.end += int64(len(data))
	l.kept += int64(len(data))
	for l.kept > l.limit {
		first := &l.chunks[l.head]
		excess := l.kept - l.limit
		if int64(len(first.data)) <= excess {
			n := int64(len(first.data))
			l.droppedBy[first.stream] += n
			l.kept -= n
			l.start += n
			l.chunks[l.head] = logChunk{}
			l.head++
		} else {
			l.droppedBy[first.stream] += excess
			first.data = first.data[excess:]
			first.offset += excess
			l.kept -= excess
			l.start += excess
		}
	}
	if l.head > 1024 && l.head*2 > len(l.chunks) {
		l.chunks = append([]logChunk(nil), l.chunks[l.head:]...)
		l.head = 0
	}
	l.wake()
}

func (l *outputLog) seal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.sealed {
		l.sealed = true
		l.wake()
	}
}

func (l *outputLog) isSealed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sealed
}

func (l *outputLog) keptBytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kept
}

// read returns the kept chunks from offset on, the first cut to start exactly there, up to
// about maxBytes.
func (l *outputLog) read(offset int64, maxBytes int64) []logChunk {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := max(offset, l.start)
	if from >= l.end {
		return nil
	}
	lo, hi := l.head, len(l.chunks)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if l.chunks[mid].offset <= from {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	var out []logChunk
	var size int64
	for i := lo; i < len(l.chunks) && size < maxBytes; i++ {
		c := l.chunks[i]
		skip := int64(0)
		if from > c.offset {
			skip = from - c.offset
		}
		out = append(out, logChunk{stream: c.stream, offset: c.offset + skip, data: c.data[skip:]})
		size += int64(len(c.data)) - skip
	}
	return out
}

// collect returns the kept bytes of one stream, or of both in the order they were written, and
// how many were discarded.
func (l *outputLog) collect(stream int) ([]byte, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	for i := l.head; i < len(l.chunks); i++ {
		c := l.chunks[i]
		if stream == streamCombined || c.stream == stream {
			out = append(out, c.data...)
		}
	}
	if stream == streamCombined {
		return out, l.start
	}
	return out, l.droppedBy[stream]
}

// release discards every kept byte, counted as dropped.
func (l *outputLog) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := l.head; i < len(l.chunks); i++ {
		l.droppedBy[l.chunks[i].stream] += int64(len(l.chunks[i].data))
	}
	l.chunks = nil
	l.head = 0
	l.kept = 0
	l.start = l.end
	l.wake()
}
