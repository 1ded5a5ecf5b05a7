package main

import "syscall"

// dupTo makes newfd a copy of oldfd (dup2(2); some Linux ports have only
// dup3).
func dupTo(oldfd, newfd int) error { return syscall.Dup3(oldfd, newfd, 0) }
