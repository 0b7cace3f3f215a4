package main

import (
	"fmt"
	"os"
	"syscall"
)

// protectStdout keeps stdout for the protocol alone. It moves the protocol
// stream to a duplicate of fd 1 and points fd 1 at stderr, so a stray print
// from any library, Go or C (FAISS, ONNX Runtime), lands in the log instead
// of corrupting the JSON-RPC stream.
func protectStdout() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("dup stdout: %w", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Dup3(2, 1, 0); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("redirect stdout to stderr: %w", err)
	}
	return os.NewFile(uintptr(fd), "protocol-stdout"), nil
}
