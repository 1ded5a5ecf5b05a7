package main

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

// TestDeadOtherMount: a dead FUSE mount that is not pifs's is left alone
// and named, with the command that clears it (exit 3).
func TestDeadOtherMount(t *testing.T) {
	bin := buildPifs(t)
	store := testStore(t)
	mnt := emptyDir(t)
	fd, err := syscall.Open("/dev/fuse", syscall.O_RDWR, 0)
	if err != nil {
		skipOrFail(t, err.Error())
	}
	data := fmt.Sprintf("fd=%d,rootmode=40000,user_id=%d,group_id=%d", fd, os.Getuid(), os.Getgid())
	if err := syscall.Mount("elsewhere", mnt, "fuse.other", syscall.MS_NOSUID|syscall.MS_NODEV, data); err != nil {
		syscall.Close(fd)
		skipOrFail(t, "mount(2) of a FUSE device: "+err.Error())
	}
	syscall.Close(fd) // no server: the mount is dead
	defer syscall.Unmount(mnt, syscall.MNT_DETACH)
	out, code := pifsStatus(t, bin, nil, "--sessions-dir", store, mnt)
	want := "pifs: mountpoint " + mnt + " is a disconnected fuse.other mount of elsewhere (transport endpoint is not connected); clear it with: fusermount3 -u -z " + mnt + "\n"
	if code != exitMountpoint || out != want {
		t.Errorf("exit %d, %q; want %d, %q", code, out, exitMountpoint, want)
	}
}
