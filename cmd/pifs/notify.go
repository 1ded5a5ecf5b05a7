package main

import (
	"net"
	"os"
)

// sdNotify sends state ("READY=1", "STOPPING=1") to the service manager
// when pifs runs under systemd with Type=notify: one datagram to the unix
// socket named by $NOTIFY_SOCKET, where a leading '@' stands for the
// abstract namespace (sd_notify(3)). Without the variable it does nothing.
func sdNotify(state string) error {
	name := os.Getenv("NOTIFY_SOCKET")
	if name == "" {
		return nil
	}
	if name[0] == '@' {
		name = "\x00" + name[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Write([]byte(state))
	return err
}
