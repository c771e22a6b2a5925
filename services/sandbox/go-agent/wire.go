// A small protobuf encoding of the AgentService messages (proto/enginemanager/agent/v1): the
// agent needs a few flat messages only, so it encodes them by hand instead of carrying a
// generated library.
package main

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

const (
	wireVarint = 0
	wireI64    = 1
	wireBytes  = 2
	wireI32    = 5
)

var errMalformed = errors.New("malformed protobuf message")

type encoder struct{ b []byte }

func (e *encoder) tag(field, wire int) { e.b = binary.AppendUvarint(e.b, uint64(field<<3|wire)) }

func (e *encoder) uint(field int, v uint64) {
	if v == 0 {
		return
	}
	e.tag(field, wireVarint)
	e.b = binary.AppendUvarint(e.b, v)
}

func (e *encoder) int(field int, v int64) { e.uint(field, uint64(v)) }

func (e *encoder) bool(field int, v bool) {
	if v {
		e.uint(field, 1)
	}
}

func (e *encoder) bytes(field int, v []byte) {
	if len(v) == 0 {
		return
	}
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

func (e *encoder) string(field int, v string) {
	if v == "" {
		return
	}
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

// message writes a nested message, present even when empty.
func (e *encoder) message(field int, inner []byte) {
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(inner)))
	e.b = append(e.b, inner...)
}

// optionalInt writes a proto3 `optional` scalar: present even when zero.
func (e *encoder) optionalInt(field int, v int64) {
	e.tag(field, wireVarint)
	e.b = binary.AppendUvarint(e.b, uint64(v))
}

// field is one decoded field: its number, wire type and value.
type field struct {
	num    int
	wire   int
	varint uint64
	data   []byte
}

// fields decodes the top level of a message.
func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errMalformed
		}
		b = b[n:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case wireVarint:
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return nil, errMalformed
			}
			f.varint = v
			b = b[n:]
		case wireI64:
			if len(b) < 8 {
				return nil, errMalformed
			}
			f.varint = binary.LittleEndian.Uint64(b)
			b = b[8:]
		case wireI32:
			if len(b) < 4 {
				return nil, errMalformed
			}
			f.varint = uint64(binary.LittleEndian.Uint32(b))
			b = b[4:]
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return nil, errMalformed
			}
			f.data = b[n : n+int(l)]
			b = b[n+int(l):]
		default:
			return nil, errMalformed
		}
		out = append(out, f)
	}
	return out, nil
}

func timestampMessage(t time.Time) []byte {
	var e encoder
	e.int(1, t.Unix())
	e.int(2, int64(t.Nanosecond()))
	return e.b
}

func durationMessage(d time.Duration) []byte {
	var e encoder
	e.int(1, int64(d/time.Second))
	e.int(2, int64(d%time.Second))
	return e.b
}

// FileInfo as enginemanager.sandbox.v1.FileInfo.
type fileInfo struct {
	path    string
	size    int64
	kind    int // 1 regular, 2 directory, 3 symlink
	modTime time.Time
	mode    uint32
}

func (f fileInfo) encode() []byte {
	var e encoder
	e.string(1, f.path)
	e.int(2, f.size)
	e.uint(3, uint64(f.kind))
	e.message(4, timestampMessage(f.modTime))
	e.string(5, octalMode(f.mode))
	return e.b
}

func octalMode(mode uint32) string {
	const digits = "01234567"
	m := mode & 0o7777
	return string([]byte{digits[m>>9&7], digits[m>>6&7], digits[m>>3&7], digits[m&7]})
}

// request is a decoded request message, read by field number.
type request map[int][]field

func decodeRequest(b []byte) (request, error) {
	fs, err := fields(b)
	if err != nil {
		return nil, err
	}
	r := request{}
	for _, f := range fs {
		r[f.num] = append(r[f.num], f)
	}
	return r, nil
}

func (r request) last(n int) (field, bool) {
	fs := r[n]
	if len(fs) == 0 {
		return field{}, false
	}
	return fs[len(fs)-1], true
}

func (r request) str(n int) string {
	f, _ := r.last(n)
	return string(f.data)
}

func (r request) bytes(n int) []byte {
	f, _ := r.last(n)
	return f.data
}

func (r request) has(n int) bool { _, ok := r.last(n); return ok }

func (r request) bool(n int) bool {
	f, _ := r.last(n)
	return f.varint != 0
}

func (r request) int64(n int) int64 {
	f, _ := r.last(n)
	return int64(f.varint)
}

func (r request) int32(n int) int32 {
	f, _ := r.last(n)
	return int32(f.varint)
}

func (r request) uint32(n int) uint32 {
	f, _ := r.last(n)
	if f.varint > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(f.varint)
}

func (r request) strings(n int) []string {
	out := make([]string, 0, len(r[n]))
	for _, f := range r[n] {
		out = append(out, string(f.data))
	}
	return out
}

// stringMap decodes a map<string, string> field.
func (r request) stringMap(n int) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range r[n] {
		entry, err := decodeRequest(f.data)
		if err != nil {
			return nil, err
		}
		out[entry.str(1)] = entry.str(2)
	}
	return out, nil
}

func (r request) message(n int) (request, bool, error) {
	f, ok := r.last(n)
	if !ok {
		return nil, false, nil
	}
	m, err := decodeRequest(f.data)
	return m, true, err
}

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
