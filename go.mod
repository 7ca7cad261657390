module github.com/zabd/zabd

go 1.26
