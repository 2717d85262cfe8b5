// Package s3 stores blobs in an S3-compatible bucket (WSHUB_BLOBS=s3): Amazon S3,
// MinIO, Ceph's RADOS Gateway, Cloudflare R2, the Versity S3 Gateway and the like,
// through minio-go. Every replica reads what any of them wrote, and values of any size
// stay out of the database.
package s3

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/wshub/wshub/core"
)

// Options say which bucket of which server a Store keeps its values in.
type Options struct {
	// Endpoint is the server's URL: https://host[:port]. http is refused unless the
	// host is loopback (a server or TLS-terminating sidecar on the same host, and
	// tests): branch bundles are not sealed, and a signed request seen on the wire
	// can be replayed for minutes.
	Endpoint string
	// Bucket is the bucket, which must exist: Check refuses a missing one rather than
	// make it (a mistyped name would otherwise start an empty store beside the real
	// one, and making buckets needs a broader permission than using one).
	Bucket string
	// Region is the bucket's region ("": asked of the server, one more request and
	// permission; set it for Amazon S3).
	Region string
	// AccessKeyID and SecretAccessKey sign every request (AWS Signature V4).
	AccessKeyID, SecretAccessKey string
	// Prefix goes before every key, so that one bucket can hold more than one hub's
	// values, or other things besides ("wshub/": keys become wshub/asset_...).
	Prefix string
	// PartSize is the most of a value PutFrom holds in memory: a value up to this
	// size goes up in one PUT, a larger one as a multipart upload in parts of this
	// size (0: 16 MiB; at least 5 MiB, S3's smallest part).
	PartSize int64
	// MaxRetries bounds the attempts of each request on network errors and the
	// server's 5xx (0: minio-go's default of 10, with backoff up to a second).
	MaxRetries int
	// Transport replaces minio-go's HTTP transport (nil: its default).
	Transport http.RoundTripper
}

// singlePutMax is the most one S3 PUT takes (Amazon's limit; others take more).
const singlePutMax = 5 << 30

// minPartSize and defaultPartSize are S3's smallest part (but the last) and the part
// size PutFrom uses unless told.
const minPartSize, defaultPartSize = 5 << 20, 16 << 20

// maxKeyBytes is S3's limit on an object's name, prefix included.
const maxKeyBytes = 1024

var (
	// ErrBadKey is returned for a key the store will not name an object with: empty,
	// not UTF-8, with a control character, an empty or dot segment, or too long.
	// Core makes keys, so this is a bug caught, not a client's error.
	ErrBadKey = errors.New("invalid blob key")
	// ErrCredentials is the server refusing the access key, its secret, or a
	// permission the store needs (s3:ListBucket, s3:GetObject, s3:PutObject,
	// s3:DeleteObject, s3:AbortMultipartUpload).
	ErrCredentials = errors.New("the S3 server refused the credentials")
	// ErrNoBucket is Check's error for a bucket that does not exist.
	ErrNoBucket = errors.New("the bucket does not exist")
)

// Store is a core.BlobStore in one bucket. It keeps the other stores' semantics: Put
// replaces a whole value, and a reader sees the old bytes or the new, never a mix (S3
// makes an object visible only once its upload is complete); Get and Open of a
// missing key are core.ErrNoRows; Delete of a missing key succeeds. It is safe for
// concurrent use.
//
// Every upload request carries the MD5 of its body (Content-MD5), which the server
// checks before it stores anything: a body cut short by the network is refused, not
// kept as a shorter value. Counting the bytes against Content-Length should do as
// much, but a server may not (versitygw 1.8 keeps what arrived of a body not signed
// chunk by chunk, as bodies over https are), while Content-MD5 is as old as the S3 API
// and every server checks it.
type Store struct {
	client   *minio.Client
	core     minio.Core
	endpoint string
	bucket   string
	prefix   string
	partSize int64
}

var _ core.BlobStore = (*Store)(nil)

// New returns a store on o's bucket. It sends nothing: Check does.
func New(o Options) (_ *Store, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("s3: %w", err)
		}
	}()
	u, err := ParseEndpoint(o.Endpoint)
	if err != nil {
		return nil, err
	}
	switch {
	case o.Bucket == "":
		return nil, errors.New("no bucket")
	case o.AccessKeyID == "" || o.SecretAccessKey == "":
		return nil, errors.New("no access key id or secret access key")
	case o.PartSize != 0 && (o.PartSize < minPartSize || o.PartSize > singlePutMax):
		return nil, fmt.Errorf("part size %d: must be %d to %d bytes", o.PartSize, minPartSize, int64(singlePutMax))
	}
	if err := CheckPrefix(o.Prefix); err != nil {
		return nil, err
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:      credentials.NewStaticV4(o.AccessKeyID, o.SecretAccessKey, ""),
		Secure:     u.Scheme == "https",
		Region:     o.Region,
		Transport:  o.Transport,
		MaxRetries: o.MaxRetries,
	})
	if err != nil {
		return nil, err
	}
	return &Store{client: client, core: minio.Core{Client: client}, endpoint: u.String(), bucket: o.Bucket,
		prefix: o.Prefix, partSize: cmp.Or(o.PartSize, defaultPartSize)}, nil
}

// ParseEndpoint reads an endpoint URL: https://host[:port], or http:// to a loopback
// host, with no path, query, fragment or user.
func ParseEndpoint(raw string) (*url.URL, error) {
	const example = "a URL such as https://s3.eu-west-1.amazonaws.com or https://minio.example.com:9000"
	if raw == "" {
		return nil, fmt.Errorf("no endpoint: give %s", example)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("endpoint %q: not %s", raw, example)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, fmt.Errorf("endpoint %q: the scheme must be https (or http to a loopback host)", raw)
	case u.User != nil:
		return nil, fmt.Errorf("endpoint %q: credentials do not belong in the URL", u.Redacted())
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("endpoint %q: no path, query or fragment (the bucket is a setting of its own)", raw)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return nil, fmt.Errorf("endpoint %q: http is allowed to a loopback host only; use https (attachments are sealed, but branch bundles are not, and signed requests could be replayed)", raw)
	}
	u.Path, u.RawPath = "", ""
	return u, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckPrefix refuses a key prefix that would make odd object names: one starting
// with '/', not UTF-8, or with a control character.
func CheckPrefix(prefix string) error {
	if strings.HasPrefix(prefix, "/") || !utf8.ValidString(prefix) || strings.ContainsFunc(prefix, unicode.IsControl) {
		return fmt.Errorf("prefix %q: must be UTF-8 without control characters, not starting with /", prefix)
	}
	return nil
}

// Check asks the server for at most one key under the prefix: it answers only when
// the endpoint is an S3 server, the bucket exists and the credentials may list it.
// Listing is the permission a store needs anyway: without s3:ListBucket, Amazon S3
// answers a read of a missing key 403 rather than 404, and Get could not tell
// missing from forbidden.
func (s *Store) Check(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("s3: bucket %q at %s: %w", s.bucket, s.endpoint, err)
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing after its first page
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix, MaxKeys: 1}) {
		return s.mapErr(obj.Err)
	}
	return ctx.Err()
}

// Put stores data under key with one PUT (in parts only past the 5 GiB one PUT
// takes), retried on network errors: the bytes are at hand to send again.
func (s *Store) Put(ctx context.Context, key string, data []byte) (err error) {
	defer wrap(&err, "put", key)
	name, err := s.name(ctx, key)
	if err != nil {
		return err
	}
	return s.put(ctx, name, bytes.NewReader(data), int64(len(data)), len(data) > singlePutMax)
}

// put uploads size bytes of r in one PUT, or as a multipart upload. A multipart
// upload becomes an object only when its last part is in and the client completes
// it; minio-go aborts one that fails, so that its parts do not linger (a hub that
// dies mid-upload leaves them: the README says which lifecycle rule removes them).
func (s *Store) put(ctx context.Context, name string, r io.Reader, size int64, parts bool) error {
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", SendContentMd5: true, DisableMultipart: !parts}
	if parts {
		opts.PartSize = uint64(s.partSize)
	}
	_, err := s.client.PutObject(ctx, s.bucket, name, r, size, opts)
	return s.mapErr(err)
}

// Get reads the whole value; a missing key is core.ErrNoRows.
func (s *Store) Get(ctx context.Context, key string) (_ []byte, err error) {
	defer wrap(&err, "get", key)
	name, err := s.name(ctx, key)
	if err != nil {
		return nil, err
	}
	body, info, _, err := s.core.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.mapErr(err)
	}
	defer body.Close()
	var buf bytes.Buffer
	if info.Size > 0 {
		buf.Grow(int(info.Size))
	}
	// A body cut short is an error here (net/http checks Content-Length), never a
	// shorter value.
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Delete removes key. S3 answers a delete of a missing key as done, as the store
// must: callers delete to clean up after a failure.
func (s *Store) Delete(ctx context.Context, key string) (err error) {
	defer wrap(&err, "delete", key)
	name, err := s.name(ctx, key)
	if err != nil {
		return err
	}
	return s.mapErr(s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{}))
}

// name checks key and ctx, and returns the object's name.
func (s *Store) name(ctx context.Context, key string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if key == "" || !utf8.ValidString(key) || strings.ContainsFunc(key, unicode.IsControl) ||
		len(s.prefix)+len(key) > maxKeyBytes {
		return "", ErrBadKey
	}
	for seg := range strings.SplitSeq(key, "/") {
		// Empty and dot segments: servers and proxies that map names to paths
		// (versitygw's posix backend, some gateways) may clean them into another key.
		if seg == "" || seg == "." || seg == ".." {
			return "", ErrBadKey
		}
	}
	return s.prefix + key, nil
}

// mapErr turns the server's answers into the store's errors: a missing key is
// core.ErrNoRows, a refusal of the credentials ErrCredentials, a missing bucket
// ErrNoBucket (never ErrNoRows: every key would read as missing). Others keep the
// server's code beside its message.
func (s *Store) mapErr(err error) error {
	if err == nil {
		return nil
	}
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "":
		return err // not an answer of the server: the network, the context
	case minio.NoSuchKey:
		return core.ErrNoRows
	case minio.NoSuchBucket:
		return fmt.Errorf("%w (%s): %w", ErrNoBucket, resp.Code, err)
	}
	if resp.StatusCode == http.StatusForbidden {
		// Amazon S3 says InvalidAccessKeyId, SignatureDoesNotMatch or AccessDenied;
		// other servers have codes of their own (versitygw: XAdminUserNotFound), all
		// with 403.
		return fmt.Errorf("%w (%s): %w", ErrCredentials, resp.Code, err)
	}
	return fmt.Errorf("the S3 server answered %s: %w", resp.Code, err)
}

// wrap annotates an error once with the operation and key (keys carry no secrets).
func wrap(errp *error, op, key string) {
	if *errp != nil {
		*errp = fmt.Errorf("s3: %s %q: %w", op, key, *errp)
	}
}
