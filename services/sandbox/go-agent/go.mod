module aiem/sandbox-agent

go 1.24
