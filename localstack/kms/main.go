// Command local-kms runs the local-kms KMS emulator (github.com/nsmithuk/local-kms)
// on a loopback address. Its own main listens on every interface; this one
// serves the same handler on -addr only, and prints the address it took.
//
// It is a module of its own so that the emulator's dependencies (the v1 AWS
// SDK, goleveldb) stay out of the project's go.mod. Build it with
// `go build -C localstack/kms -o <dir>/local-kms .` (emulator.BuildKMS does).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/nsmithuk/local-kms/src"
	"github.com/nsmithuk/local-kms/src/config"
	"github.com/nsmithuk/local-kms/src/data"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "host:port to listen on (loopback)")
	dir := flag.String("data", "", "folder for the key database (required)")
	region := flag.String("region", "us-east-1", "the region in key ARNs")
	account := flag.String("account", "111122223333", "the account id in key ARNs")
	flag.Parse()
	if *dir == "" {
		log.Fatal("local-kms: -data is required")
	}
	config.AWSRegion, config.AWSAccountId = *region, *account
	config.DatabasePath, _ = filepath.Abs(*dir)
	db := data.NewDatabase(config.DatabasePath)
	defer db.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stdout, "listening on %s\n", ln.Addr())
	log.SetOutput(io.Discard) // net/http's per-connection noise
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src.HandleRequest(w, r, db)
	}))
	log.SetOutput(os.Stderr)
	log.Fatal(err)
}
