module github.com/micro-rag/micro-rag-mcp

go 1.26.8

require (
	github.com/gofrs/flock v0.13.2 // indirect
	github.com/gogs/chardet v0.0.0-20211120154057-b7413eaefb8f // indirect
	github.com/klippa-app/go-pdfium v1.21.4 // indirect
	github.com/ledongthuc/pdf v0.0.0-20260907135840-6c8c28e0e8a0 // indirect
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/yalue/onnxruntime_go v1.27.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)
