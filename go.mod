module github.com/pifs/pifs

go 1.25

require (
	github.com/alecthomas/chroma/v2 v2.27.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/google/uuid v1.6.0
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/spf13/pflag v1.1.0
	github.com/yuin/goldmark v1.8.7
	go.etcd.io/bbolt v1.4.3
	golang.org/x/sys v0.29.0
)

require github.com/dlclark/regexp2/v2 v2.2.1 // indirect
