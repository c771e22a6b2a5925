// Every process's pipes are read by one loop, in the order the kernel saw them become readable:
// epoll's ready list is first come, first served, so a program that writes to stdout and then to
// stderr has them in that order in the combined log. Goroutines woken by the runtime's poller run
// in no set order (one batch of events comes back reversed), which put "err" before an earlier
// "out".
package main

import (
	"sync"
	"syscall"
)

// maxReadPerEvent bounds what one readable pipe gives before the loop moves on to the next event,
// so one talkative process cannot hold the others' output back.
const maxReadPerEvent = 1 << 20

type polledPipe struct {
	fd     int
	stream int
	log    *outputLog
	closed func()
}

type outputPoller struct {
	epfd  int
	mu    sync.Mutex
	pipes map[int32]*polledPipe
}

// sharedOutputPoller is started on first use; its loop holds one thread for good (threads.go
// counts it).
var sharedOutputPoller = sync.OnceValues(func() (*outputPoller, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	op := &outputPoller{epfd: epfd, pipes: map[int32]*polledPipe{}}
	go op.loop()
	return op, nil
})

// add reads the non-blocking pipe `fd` into `log` as `stream` until its writers are gone, then
// closes it and calls `closed`.
func (op *outputPoller) add(fd, stream int, log *outputLog, closed func()) error {
	op.mu.Lock()
	op.pipes[int32(fd)] = &polledPipe{fd: fd, stream: stream, log: log, closed: closed}
	op.mu.Unlock()
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
	if err := syscall.EpollCtl(op.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		op.mu.Lock()
		delete(op.pipes, int32(fd))
		op.mu.Unlock()
		return err
	}
	return nil
}

func (op *outputPoller) loop() {
	events := make([]syscall.EpollEvent, 256)
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.EpollWait(op.epfd, events, -1)
		if err != nil {
			continue // EINTR; the descriptor itself never goes away
		}
		for _, ev := range events[:n] {
			op.mu.Lock()
			pipe := op.pipes[ev.Fd]
			op.mu.Unlock()
			if pipe != nil {
				op.drain(pipe, buf)
			}
		}
	}
}

// drain reads what the pipe holds now (up to maxReadPerEvent; the rest comes with the next
// event), and ends the pipe at end of file or on an error.
func (op *outputPoller) drain(pipe *polledPipe, buf []byte) {
	for read := 0; read < maxReadPerEvent; {
		n, err := syscall.Read(pipe.fd, buf)
		if n > 0 {
			pipe.log.append(pipe.stream, append([]byte(nil), buf[:n]...))
			read += n
			continue
		}
		if err == syscall.EAGAIN {
			return
		}
		if err == syscall.EINTR {
			continue
		}
		_ = syscall.EpollCtl(op.epfd, syscall.EPOLL_CTL_DEL, pipe.fd, nil)
		op.mu.Lock()
		delete(op.pipes, int32(pipe.fd))
		op.mu.Unlock()
		syscall.Close(pipe.fd)
		pipe.closed()
		return
	}
}
