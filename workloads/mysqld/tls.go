package mysqld

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"
)

// TLSFiles are a server's certificate authority and key pair, PEM, in its
// directory. The server is started with them so that PHP's SSL tests
// (mysqli's, pdo_mysql's) connect over TLS instead of skipping or failing
// as they do against a server without: mysqlnd's TLS code is part of what
// a build ships.
type TLSFiles struct {
	CA   string // the authority's certificate: what a client verifies the server with
	Cert string // the server's certificate, signed by CA
	Key  string // the server's key, mode 0600
}

// tlsValidity is how long the certificates are valid: a server lives for
// one run, and clocks differ by minutes at most.
const tlsValidity = 7 * 24 * time.Hour

// makeTLS writes a new authority and a server certificate for hosts (IP
// addresses or names) into dir/tls, replacing any earlier ones: no key
// outlives the server that was started with it by more than a run.
func makeTLS(dir string, hosts []string) (TLSFiles, error) {
	tdir := filepath.Join(dir, "tls")
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return TLSFiles{}, fmt.Errorf("tls: %w", err)
	}
	files := TLSFiles{
		CA:   filepath.Join(tdir, "ca.pem"),
		Cert: filepath.Join(tdir, "server-cert.pem"),
		Key:  filepath.Join(tdir, "server-key.pem"),
	}
	caKey, caDER, err := issue(&x509.Certificate{
		Subject:               pkix.Name{Organization: []string{"patchproof"}, CommonName: "patchproof test CA"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil)
	if err != nil {
		return TLSFiles{}, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return TLSFiles{}, fmt.Errorf("tls: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{Organization: []string{"patchproof"}, CommonName: "patchproof test MariaDB"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	key, der, err := issue(tmpl, caCert, caKey)
	if err != nil {
		return TLSFiles{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return TLSFiles{}, fmt.Errorf("tls: %w", err)
	}
	for _, f := range []struct {
		path  string
		block string
		der   []byte
		mode  os.FileMode
	}{
		{files.CA, "CERTIFICATE", caDER, 0o644},
		{files.Cert, "CERTIFICATE", der, 0o644},
		{files.Key, "PRIVATE KEY", keyDER, 0o600},
	} {
		// Removed first: WriteFile keeps an existing file's mode.
		os.Remove(f.path)
		if err := safefs.WritePath(f.path, pem.EncodeToMemory(&pem.Block{Type: f.block, Bytes: f.der}), f.mode); err != nil {
			return TLSFiles{}, fmt.Errorf("tls: %w", err)
		}
	}
	return files, nil
}

// issue makes a key and a certificate of tmpl for it, valid from an hour
// ago for tlsValidity, signed by parent's key (by its own when parent is
// nil).
func issue(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = tmpl.NotBefore.Add(tlsValidity)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	return key, der, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// args are mariadbd's options for the files, none when there are none.
func (f TLSFiles) args() []string {
	if f.CA == "" {
		return nil
	}
	return []string{"--ssl-ca=" + f.CA, "--ssl-cert=" + f.Cert, "--ssl-key=" + f.Key}
}

// errNoTLS: the server was given certificates and did not take them.
var errNoTLS = errors.New("the server has no TLS although it was given certificates")

// checkTLS makes sure the server took its certificates: a server whose
// TLS failed to load still starts (have_ssl DISABLED), and PHP's SSL tests
// would then skip where they should run.
func (s *Server) checkTLS(ctx context.Context) error {
	if s.TLS.CA == "" {
		return nil
	}
	db, err := s.open(s.Conn.WithDatabase(""))
	if err != nil {
		return fmt.Errorf("check tls: %w", err)
	}
	defer db.Close()
	var have string
	if err := db.QueryRowContext(ctx, "SELECT @@have_ssl").Scan(&have); err != nil {
		return fmt.Errorf("check tls: %w", err)
	}
	if have != "YES" {
		return fmt.Errorf("check tls: %w (have_ssl %s; see %s)", errNoTLS, have, s.ErrorLog)
	}
	return nil
}
