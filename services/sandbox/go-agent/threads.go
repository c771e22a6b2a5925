// The agent's threads count against its sandbox's process bound (the sandbox's pids cgroup, and
// the bound over all sandboxes of the host), which the sandbox's own processes can fill. The Go
// runtime starts an OS thread whenever a goroutine blocks in a system call while others wait to
// run, and dies when the kernel refuses one. So the agent starts its threads up front, while the
// bound has room, and lets only so many goroutines into blocking work at once that those threads
// always suffice: a call past that waits for a turn. Pipes and sockets never block a thread
// (they go through the runtime's poller), so what takes a turn is file system work and starts.
package main

import (
	"runtime"
	"sync"
)

// Every thread counts against the host's bounds too: a thousand idle sandboxes hold a thousand
// agents' threads (AIEM_SANDBOX_MAX_TOTAL_PROCESSES, by default half of pid_max, is 16,384 on a
// host with the kernel's default pid_max of 32,768). So the reservation is kept small: an idle
// agent has about 12 threads, the few the runtime starts by itself before the reservation (idle
// ones among them, which also serve) and the reserved ones.
const (
	// maxProcs bounds the goroutines running Go code at once; the agent's work is I/O.
	maxProcs = 2
	// blockingTurns is how many goroutines may be in blocking system calls at once: file system
	// work and starts, each short; more wait for a turn.
	blockingTurns = 4
	// spareThreads covers the output poller's loop (output_poller.go), which waits in epoll_wait
	// for good, and short system calls outside a turn; the runtime's own threads, started before
	// the reservation, come on top.
	spareThreads = 2
)

var turns = make(chan struct{}, blockingTurns)

// blocking waits for a turn at blocking work; the returned function gives it back.
func blocking() func() {
	turns <- struct{}{}
	return func() { <-turns }
}

// reserveThreads makes the runtime start the threads the agent will need now. Each goroutine
// below holds a thread of its own until all of them hold one; the runtime then keeps the
// threads, idle, for later work (it never ends an idle thread).
func reserveThreads() {
	if runtime.GOMAXPROCS(0) > maxProcs {
		runtime.GOMAXPROCS(maxProcs)
	}
	n := runtime.GOMAXPROCS(0) + blockingTurns + spareThreads
	var held, done sync.WaitGroup
	release := make(chan struct{})
	held.Add(n)
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			held.Done()
			<-release
			// Unlocked before it returns, so that the thread is kept rather than ended.
			runtime.UnlockOSThread()
		}()
	}
	held.Wait()
	close(release)
	done.Wait()
}
