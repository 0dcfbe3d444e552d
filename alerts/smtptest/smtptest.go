// Package smtptest is a small real SMTP server for tests, listening on
// 127.0.0.1: it speaks EHLO/HELO, AUTH PLAIN, MAIL, RCPT, DATA, RSET, NOOP
// and QUIT over net/textproto, records every message it accepts (and every
// one it refuses), and can be told to answer DATA with a temporary (4xx) or
// permanent (5xx) failure.
package smtptest

import (
	"encoding/base64"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"testing"
)

// Message is one accepted message.
type Message struct {
	From string
	To   []string
	Data string // as received, dot-unstuffed, CRLF line ends
	Auth string // the user of AUTH PLAIN, if any
}

// Server is a running test SMTP server.
type Server struct {
	Addr string

	ln   net.Listener
	mu   sync.Mutex
	msgs []Message
	// refused are the messages DATA refused (see SetDataReply).
	refused []Message
	// reply, when not empty, answers DATA instead of 250 (for example
	// "451 4.3.0 try later" or "554 5.7.1 rejected").
	reply string
	wg    sync.WaitGroup
}

// MustStart starts a Server on 127.0.0.1, stopped at the end of the test.
func MustStart(tb testing.TB) *Server {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{Addr: ln.Addr().String(), ln: ln}
	s.wg.Add(1)
	go s.serve()
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.ln.Close()
	s.wg.Wait()
}

// SetDataReply makes DATA answer reply ("" restores 250).
func (s *Server) SetDataReply(reply string) {
	s.mu.Lock()
	s.reply = reply
	s.mu.Unlock()
}

// Messages returns the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Refused returns the messages DATA answered with the reply of
// SetDataReply, so that a test can tell that a send was tried.
func (s *Server) Refused() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.refused...)
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.session(textproto.NewConn(c))
		}()
	}
}

func (s *Server) session(tc *textproto.Conn) {
	_ = tc.PrintfLine("220 smtptest ESMTP ready")
	var m Message
	user := ""
	for {
		line, err := tc.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			_ = tc.PrintfLine("250-smtptest\r\n250-8BITMIME\r\n250-SMTPUTF8\r\n250 AUTH PLAIN")
		case "HELO":
			_ = tc.PrintfLine("250 smtptest")
		case "AUTH":
			mech, resp, _ := strings.Cut(arg, " ")
			if !strings.EqualFold(mech, "PLAIN") {
				_ = tc.PrintfLine("504 5.5.4 mechanism not supported")
				continue
			}
			if resp == "" {
				_ = tc.PrintfLine("334 ")
				if resp, err = tc.ReadLine(); err != nil {
					return
				}
			}
			b, err := base64.StdEncoding.DecodeString(resp)
			parts := strings.Split(string(b), "\x00")
			if err != nil || len(parts) != 3 {
				_ = tc.PrintfLine("501 5.5.2 bad credentials")
				continue
			}
			user = parts[1]
			_ = tc.PrintfLine("235 2.7.0 authenticated")
		case "MAIL":
			m = Message{From: addrOf(arg), Auth: user}
			_ = tc.PrintfLine("250 2.1.0 ok")
		case "RCPT":
			m.To = append(m.To, addrOf(arg))
			_ = tc.PrintfLine("250 2.1.5 ok")
		case "DATA":
			_ = tc.PrintfLine("354 go ahead")
			data, err := tc.ReadDotLines()
			if err != nil {
				return
			}
			m.Data = strings.Join(data, "\r\n")
			s.mu.Lock()
			reply := s.reply
			if reply == "" {
				s.msgs = append(s.msgs, m)
			} else {
				s.refused = append(s.refused, m)
			}
			s.mu.Unlock()
			if reply == "" {
				reply = "250 2.0.0 queued"
			}
			_ = tc.PrintfLine("%s", reply)
			m = Message{}
		case "RSET":
			m = Message{}
			_ = tc.PrintfLine("250 2.0.0 ok")
		case "NOOP":
			_ = tc.PrintfLine("250 2.0.0 ok")
		case "QUIT":
			_ = tc.PrintfLine("221 2.0.0 bye")
			return
		default:
			_ = tc.PrintfLine("502 5.5.2 command not implemented")
		}
	}
}

func addrOf(arg string) string {
	if i := strings.IndexByte(arg, '<'); i >= 0 {
		if j := strings.IndexByte(arg[i:], '>'); j >= 0 {
			return arg[i+1 : i+j]
		}
	}
	return arg
}
