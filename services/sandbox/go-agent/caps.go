package main

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// dropCapabilitiesFlag asks the agent to empty its capability sets before anything else, as the
// sandbox's first process: bubblewrap leaves the bounding set full and gives the agent
// CAP_SETPCAP for this step, which it drops too, so that nothing in the sandbox can ever gain a
// capability (exec, as root, grants the bounding set).
const dropCapabilitiesFlag = "--drop-capabilities"

const (
	prCapbsetDrop        = 24
	prCapAmbient         = 47
	prCapAmbientClearAll = 4
	capabilityVersion3   = 0x20080522
)

type capHeader struct {
	version uint32
	pid     int32
}

type capData struct {
	effective   uint32
	permitted   uint32
	inheritable uint32
}

// dropCapabilities empties the bounding, ambient, inheritable, permitted and effective sets of
// every thread of the agent: capabilities are a thread's, and the Go runtime has started threads
// before main runs, any of which may later fork a program.
func dropCapabilities() error {
	for c := uintptr(0); c < 64; c++ {
		if _, _, errno := syscall.AllThreadsSyscall(syscall.SYS_PRCTL, prCapbsetDrop, c, 0); errno != 0 {
			if errno == syscall.EINVAL && c > 0 {
				break // past the last capability this kernel knows
			}
			return fmt.Errorf("cannot drop capability %d from the bounding set: %v", c, errno)
		}
	}
	if _, _, errno := syscall.AllThreadsSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); errno != 0 && errno != syscall.EINVAL {
		return fmt.Errorf("cannot clear the ambient capabilities: %v", errno)
	}
	header := capHeader{version: capabilityVersion3}
	var data [2]capData
	_, _, errno := syscall.AllThreadsSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&header)), uintptr(unsafe.Pointer(&data[0])), 0)
	runtime.KeepAlive(&header)
	runtime.KeepAlive(&data)
	if errno != 0 {
		return fmt.Errorf("cannot drop the agent's capabilities: %v", errno)
	}
	return nil
}
