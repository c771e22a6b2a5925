package main

import "testing"

func TestOutputLogDiscardsOldestAndCounts(t *testing.T) {
	l := newOutputLog(5)
	l.append(streamStdout, []byte("abc"))
	l.append(streamStderr, []byte("defg"))
	start, end, _, _ := l.state()
	if start != 2 || end != 7 {
		t.Fatalf("start %d end %d", start, end)
	}
	data, dropped := l.collect(streamCombined)
	if string(data) != "cdefg" || dropped != 2 {
		t.Fatalf("combined %q dropped %d", data, dropped)
	}
	chunks := l.read(4, 100)
	if len(chunks) != 1 || string(chunks[0].data) != "efg" || chunks[0].offset != 4 {
		t.Fatalf("read %v", chunks)
	}
	l.release()
	if _, dropped := l.collect(streamStderr); dropped != 4 {
		t.Fatalf("released stderr dropped %d", dropped)
	}
}

func TestOutputLogWakesWaitersAndIgnoresAfterSeal(t *testing.T) {
	l := newOutputLog(10)
	_, _, _, changed := l.state()
	l.append(streamStdout, []byte("x"))
	select {
	case <-changed:
	default:
		t.Fatal("no wake on append")
	}
	l.seal()
	l.append(streamStdout, []byte("y"))
	if _, end, sealed, _ := l.state(); end != 1 || !sealed {
		t.Fatalf("end %d sealed %v", end, sealed)
	}
}

func TestWireRoundTrip(t *testing.T) {
	var e encoder
	e.string(1, "p")
	e.int(2, -1)
	e.message(3, nil)
	r, err := decodeRequest(e.b)
	if err != nil || r.str(1) != "p" || r.int64(2) != -1 || !r.has(3) {
		t.Fatalf("%v %v", r, err)
	}
	if _, err := decodeRequest([]byte{0x0a, 0x05, 'a'}); err == nil {
		t.Fatal("truncated message accepted")
	}
	if octalMode(0o100755) != "0755" {
		t.Fatal(octalMode(0o100755))
	}
}
