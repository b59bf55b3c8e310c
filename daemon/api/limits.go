package api

// Request body limits, per operation. A body is read only after its token
// has been checked, so these bound what an authenticated client can make
// the service read and hold; an unauthenticated one gets its 401 before
// any of its body is read. Each operation gets the smallest class its
// largest legitimate body fits with a wide margin, and a body over it is
// a 413 in assisted's error shape: at once when Content-Length says so,
// else when the limit is reached while reading.
const (
	// SmallBody bounds the agent's short reports (register host, install
	// and logs progress, complete installation) and the operations that
	// take no body at all: a few hundred bytes each.
	SmallBody = 64 << 10
	// MediumBody bounds the user's cluster, host and install-config
	// changes: a pull secret, SSH keys, a trust bundle of some hundred KiB.
	MediumBody = 1 << 20
)

// Operations with the larger limits; every other operation takes
// SmallBody. routesWithLimits in the tests checks the names against the
// route table.
var (
	// largeBodyOps take Config.MaxBody (DefaultMaxBody): step replies (a
	// connectivity report over a thousand peers is about 1 MiB, quoted
	// inside the reply), manifests (base64 content) and infra-envs (the
	// static network config of every host).
	largeBodyOps = []string{"v2PostStepReply", "V2CreateClusterManifest", "V2UpdateClusterManifest", "RegisterInfraEnv", "UpdateInfraEnv"}
	// mediumBodyOps take MediumBody.
	mediumBodyOps = []string{"v2RegisterCluster", "V2UpdateCluster", "v2UpdateHost", "v2UpdateClusterInstallConfig"}
)

// uploadOp is the one operation whose body is a file: a log bundle.
const uploadOp = "V2UploadLogs"

// bodyLimit is the most a request body of operation op may hold, given
// the limits of a Config.
func bodyLimit(op string, maxBody, maxLogs int64) int64 {
	if op == uploadOp {
		return maxLogs + multipartSlack
	}
	for _, o := range largeBodyOps {
		if o == op {
			return maxBody
		}
	}
	for _, o := range mediumBodyOps {
		if o == op {
			return min(MediumBody, maxBody)
		}
	}
	return min(SmallBody, maxBody)
}

// BodyLimit is the most a request body of rt may hold under a Config
// with the default limits.
func (rt Route) BodyLimit() int64 {
	return bodyLimit(rt.Operation, DefaultMaxBody, DefaultMaxLogsSize)
}

// bodyLimitOf is the limit of operation op on this server.
func (s *server) bodyLimitOf(op string) int64 {
	maxLogs := int64(DefaultMaxLogsSize)
	if s.logs != nil {
		maxLogs = s.logs.max
	}
	return bodyLimit(op, s.cfg.MaxBody, maxLogs)
}
