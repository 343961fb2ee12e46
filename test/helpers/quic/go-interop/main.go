// Interop peer for test/e2e/quic-go-interop.test.ts: a quic-go client or echo server speaking
// the Orchestra transport (QUIC v1, TLS 1.3 mutual auth with the cert store's CA, ALPN
// orchestra-plugin, one bidirectional stream per RPC). Built in GOPATH mode against Debian's
// golang-github-lucas-clemente-quic-go-dev (0.29); the test skips when that is not installed.
//
//	interop client ADDR CERTDIR HEXFRAME N NAME  sends HEXFRAME on N streams (8 at a time), each
//	                                             read to its FIN; prints "REPLY <hex>" (first)
//	                                             and "DONE N fails F"
//	interop server ADDR CERTDIR                  echoes each stream's bytes + FIN; prints
//	                                             "LISTENING host:port"; STREAMS=n limits the
//	                                             client's concurrent streams
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	quic "github.com/lucas-clemente/quic-go"
)

func tlsConf(dir, name string, server bool) *tls.Config {
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		panic(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"))
	if err != nil {
		panic(err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"orchestra-plugin"}, MinVersion: tls.VersionTLS13}
	if server {
		c.ClientCAs = pool
		c.ClientAuth = tls.RequireAndVerifyClientCert
	} else {
		c.RootCAs = pool
		c.ServerName = "localhost"
	}
	return c
}

func main() {
	maxStreams := int64(1000)
	if v := os.Getenv("STREAMS"); v != "" {
		n, _ := strconv.Atoi(v)
		maxStreams = int64(n)
	}
	qc := &quic.Config{MaxIdleTimeout: 30 * time.Second, KeepAlivePeriod: 5 * time.Second, MaxIncomingStreams: maxStreams}
	switch os.Args[1] {
	case "client":
		frame, _ := hex.DecodeString(os.Args[4])
		n, _ := strconv.Atoi(os.Args[5])
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		conn, err := quic.DialAddrContext(ctx, os.Args[2], tlsConf(os.Args[3], os.Args[6], false), qc)
		if err != nil {
			fmt.Println("DIAL ERROR", err)
			os.Exit(1)
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		var mu sync.Mutex
		fails := 0
		for i := 0; i < n; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer wg.Done()
				defer func() { <-sem }()
				s, err := conn.OpenStreamSync(ctx)
				if err != nil {
					mu.Lock()
					fails++
					mu.Unlock()
					fmt.Println("OPEN ERROR", err)
					return
				}
				s.Write(frame)
				s.Close()
				b, err := io.ReadAll(s)
				if err != nil {
					mu.Lock()
					fails++
					mu.Unlock()
					fmt.Println("READ ERROR", err)
					return
				}
				if i == 0 {
					fmt.Println("REPLY", hex.EncodeToString(b))
				}
			}(i)
		}
		wg.Wait()
		fmt.Println("DONE", n, "fails", fails)
		conn.CloseWithError(0, "bye")
	case "server":
		ln, err := quic.ListenAddr(os.Args[2], tlsConf(os.Args[3], "orchestrator", true), qc)
		if err != nil {
			panic(err)
		}
		fmt.Println("LISTENING", ln.Addr().String())
		for {
			conn, err := ln.Accept(context.Background())
			if err != nil {
				fmt.Println("ACCEPT ERROR", err)
				continue
			}
			go func() {
				for {
					s, err := conn.AcceptStream(context.Background())
					if err != nil {
						return
					}
					go func() {
						b, _ := io.ReadAll(s)
						s.Write(b)
						s.Close()
					}()
				}
			}()
		}
	}
}
