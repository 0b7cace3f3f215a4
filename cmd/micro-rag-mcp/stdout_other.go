//go:build !linux

package main

import "os"

// protectStdout returns stdout unchanged where fd juggling is not supported.
func protectStdout() (*os.File, error) { return os.Stdout, nil }
