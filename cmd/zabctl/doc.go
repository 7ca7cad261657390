// Command zabctl is the tool a ZooKeeper operator and a Zab learner reach
// for, in Go, shipped with zabd.
//
//	zabctl [-server host:port[,...]] [-timeout ms] [-r] [-o json] [cmd args]
//	    zkCli's shell: every command of ZooKeeper 3.8's zkCli with its flags
//	    and output; interactive (line editing, history, completion) without
//	    a command, one-shot with one (exit code 0, 1, or 127 for an
//	    unknown command).
//	zabctl log dump [-from ZXID] [-to ZXID] [-session ID] [-o json] FILE...
//	zabctl log verify DIR
//	zabctl log truncate [-force] DIR ZXID
//	zabctl snap dump [-o json] FILE
//	zabctl snap digest FILE
//	    Data tools for zabd's and ZooKeeper 3.8's txn logs and snapshots.
//	zabctl ensemble status -server host:port[,...] [-watch DURATION]
//	    A table of the members from srvr and mntr.
//	zabctl run view [-o run.html] [-shiviz FILE] MEMBER.jsonl...
//	    The members' run records (zoo.cfg runRecordFile) merged, their
//	    clocks aligned from the packets, as runview's page.
//
// See docs/zabctl.md.
package main
