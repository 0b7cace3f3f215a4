// Package durable flushes files and folders to disk, so that a write or a
// rename survives a crash; the index and the model cache both rely on it.
package durable

import "os"

// SyncFile flushes the file (or folder) at path to disk.
func SyncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SyncDir flushes a folder's entries, making a rename or create in it
// durable.
func SyncDir(dir string) error { return SyncFile(dir) }
