//go:build darwin || freebsd

package main

import "syscall"

// dupTo makes newfd a copy of oldfd (dup2(2)).
func dupTo(oldfd, newfd int) error { return syscall.Dup2(oldfd, newfd) }
