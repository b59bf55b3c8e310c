package assisted

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

// FuzzPreparationReply: whatever an agent answers to a preparation check
// (disk speed, image availability), with whatever exit code, decoding
// either refuses it with a 400 or keeps results that are sound (a named
// image, a known result, finite non-negative figures, a non-negative sync
// duration) and that decode again the same once encoded.
func FuzzPreparationReply(f *testing.F) {
	types := []wire.StepType{wire.StepTypeInstallationDiskSpeedCheck, wire.StepTypeContainerImageAvailability}
	f.Add(uint8(0), int64(0), `{"path":"/dev/disk/by-id/wwn-0x5000c500","io_sync_duration":4}`)
	f.Add(uint8(0), int64(255), ``)
	f.Add(uint8(0), int64(0), `{"path":"/dev/vda","io_sync_duration":-1}`)
	f.Add(uint8(1), int64(2), `{"images":[{"name":"quay.io/a/b:1","result":"failure"},null]}`)
	f.Add(uint8(1), int64(0), `{"images":[{"name":"quay.io/a/b:1","result":"success","size_bytes":1e300,"time":1e-300,"download_rate":1e308}]}`)
	f.Add(uint8(1), int64(0), `{"images":[{"name":"","result":"success"}]}`)
	f.Fuzz(func(t *testing.T, which uint8, code int64, out string) {
		typ := types[int(which)%len(types)]
		// decode is the row's decoder, what it kept re-encoded as the
		// agent would send it.
		decode := func(out string) (kept any, again string, ok bool, err error) {
			r := &wire.StepReply{StepType: typ, ExitCode: code, Output: out}
			switch typ {
			case wire.StepTypeInstallationDiskSpeedCheck:
				var ds diskSpeedResult
				ds, ok, err = decodeDiskSpeed(nil, hostKey{}, r)
				if ok && ds.resp.IOSyncDuration < 0 {
					t.Fatalf("%q: kept disk speed %+v", out, ds.resp)
				}
				return ds, wire.MustEncodeEmbedded(ds.resp), ok, err
			default:
				var images []*wire.ContainerImageAvailability
				images, ok, err = decodeImages(nil, hostKey{}, r)
				for _, im := range images {
					if im == nil || im.Name == "" || !finiteNonNegative(im.SizeBytes, im.Time, im.DownloadRate) ||
						im.Result != wire.ContainerImageAvailabilityResultSuccess && im.Result != wire.ContainerImageAvailabilityResultFailure {
						t.Fatalf("%q: kept image %+v", out, im)
					}
				}
				return images, wire.MustEncodeEmbedded(wire.ContainerImageAvailabilityResponse{Images: images}), ok, err
			}
		}
		kept, again, ok, err := decode(out)
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) || ae.Kind != KindBadRequest || !strings.HasPrefix(ae.Error(), "output: ") {
				t.Fatalf("%s %q: %v is not a 400 about the output", typ, out, err)
			}
			return
		}
		if !ok {
			return // the check is still running
		}
		kept2, _, ok, err := decode(again)
		if err != nil || !ok {
			t.Fatalf("%s: kept %q does not decode again: %v", typ, again, err)
		}
		if diff := cmp.Diff(kept, kept2, cmp.AllowUnexported(diskSpeedResult{})); diff != "" {
			t.Fatalf("%s: decoded again differs (-first +again):\n%s", typ, diff)
		}
	})
}
