package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"
)

// systemd's service notifications (docs/operations.md, Deployment): under
// Type=notify, systemd sets NOTIFY_SOCKET and waits for READY=1 before it
// counts the service started; with WatchdogSec= it sets WATCHDOG_USEC and
// restarts a service that sends no WATCHDOG=1 for that long. Each message
// is one datagram on that unix socket, so no library is needed.

// systemdNotifier sends the node's notifications; its zero value (no
// NOTIFY_SOCKET: not run by systemd, or Type=exec) sends nothing.
type systemdNotifier struct {
	addr     *net.UnixAddr
	watchdog time.Duration // the ping interval, half of WATCHDOG_USEC; 0 for none
	log      *slog.Logger
}

// newSystemdNotifier reads the notification socket and the watchdog's
// timeout from the environment systemd gives the service.
func newSystemdNotifier(log *slog.Logger) *systemdNotifier {
	n := &systemdNotifier{log: log}
	sock := os.Getenv("NOTIFY_SOCKET")
	if sock == "" {
		return n
	}
	if sock[0] == '@' { // an abstract socket
		sock = "\x00" + sock[1:]
	}
	n.addr = &net.UnixAddr{Name: sock, Net: "unixgram"}
	n.watchdog = watchdogInterval(os.Getenv("WATCHDOG_USEC"), os.Getenv("WATCHDOG_PID"))
	return n
}

// watchdogInterval is half the watchdog's timeout, as systemd advises, or
// 0 when there is no watchdog or it watches another process.
func watchdogInterval(usec, pid string) time.Duration {
	if pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0
	}
	us, err := strconv.ParseInt(usec, 10, 64)
	if err != nil || us <= 0 {
		return 0
	}
	return time.Duration(us) * time.Microsecond / 2
}

// send writes one notification. A failure is logged, never fatal: the
// node serves whether or not systemd hears it.
func (n *systemdNotifier) send(state string) {
	if n.addr == nil {
		return
	}
	conn, err := net.DialUnix("unixgram", nil, n.addr)
	if err == nil {
		_, err = conn.Write([]byte(state))
		conn.Close()
	}
	if err != nil {
		n.log.Warn("notifying systemd", "state", state, "error", err)
	}
}

// ready says the node serves, and starts the watchdog's pings, which go
// on until ctx is done (the shutdown starts), then says it is stopping.
func (n *systemdNotifier) ready(ctx context.Context) {
	if n.addr == nil {
		return
	}
	n.send("READY=1")
	go n.ping(ctx)
}

// ping sends WATCHDOG=1 every interval until ctx is done; then STOPPING=1,
// after which systemd waits up to TimeoutStopSec= for the process to end
// and no longer expects pings.
func (n *systemdNotifier) ping(ctx context.Context) {
	var tick <-chan time.Time
	if n.watchdog > 0 {
		t := time.NewTicker(n.watchdog)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			n.send("STOPPING=1")
			return
		case <-tick:
			n.send("WATCHDOG=1")
		}
	}
}
