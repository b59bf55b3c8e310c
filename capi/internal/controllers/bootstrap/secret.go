package bootstrap

import (
	"bytes"
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	"github.com/nodezero/nodezero/configimage/inputs"
	"github.com/nodezero/nodezero/configimage/machineimage"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// Keys and values of the data secret.
const (
	// DataSecretValueKey holds the bootstrap data (the contract's key).
	DataSecretValueKey = "value"
	// DataSecretFormatKey says how value is encoded.
	DataSecretFormatKey = "format"
	// DataSecretFormatIgnition is format's value for Ignition.
	DataSecretFormatIgnition = "ignition"
)

// imageSpec is what the Machine's host is given: the hub's URL, agent
// token and CA, the infra-env, the Machine, the config's host settings.
// It depends only on these, so a re-made secret has the same bytes.
func imageSpec(s *scope, ie *wire.InfraEnv) machineimage.Spec {
	cfg := s.cfg
	spec := machineimage.Spec{
		ServiceURL: s.svc.URL, AgentToken: s.svc.AgentToken, CAPEM: s.svc.CAPEM, InfraEnvID: ie.ID,
		Machine:       onhost.MachineBinding{Namespace: s.machine.Namespace, Name: s.machine.Name, UID: string(s.machine.UID), Cluster: s.cluster.Name},
		NetworkConfig: cfg.Spec.NetworkConfig, NTPSources: cfg.Spec.AdditionalNTPSources,
	}
	for _, itf := range cfg.Spec.Interfaces {
		spec.Interfaces = append(spec.Interfaces, inputs.Interface{Name: itf.Name, MacAddress: itf.MACAddress})
	}
	if len(spec.Interfaces) > 0 {
		spec.Hostname = s.machine.Name // hostnames/<first MAC>
	}
	if h := cfg.Spec.RootDeviceHints; h != nil {
		spec.RootDeviceHints = inputs.RootDeviceHints{DeviceName: h.DeviceName, HCTL: h.HCTL, Model: h.Model, Vendor: h.Vendor,
			SerialNumber: h.SerialNumber, MinSizeGigabytes: int(h.MinSizeGigabytes), WWN: h.WWN, Rotational: h.Rotational}
	}
	return spec
}

// bootstrapData is the secret's value and format for the config's
// spec.format.
func bootstrapData(s *scope, ie *wire.InfraEnv) (value []byte, format string, err error) {
	spec := imageSpec(s, ie)
	if s.cfg.Spec.Format == bootstrapv1.FormatIgnition {
		value, err = machineimage.Ignition(spec)
		return value, DataSecretFormatIgnition, err
	}
	value, err = machineimage.Image(spec)
	return value, bootstrapv1.DataSecretFormatConfigImage, err
}

// dataSecret makes or mends the Machine's data secret (named as the
// config, type cluster.x-k8s.io/secret, the cluster-name label, a
// controller reference to the config) and records it in the status. A
// secret of that name that another object controls is left alone and is
// an error.
func (r *Reconciler) dataSecret(ctx context.Context, s *scope, ie *wire.InfraEnv) error {
	cfg := s.cfg
	value, format, err := bootstrapData(s, ie)
	if err != nil {
		return fmt.Errorf("nodezeroconfig %s/%s: bootstrap data: %w", cfg.Namespace, cfg.Name, err)
	}
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: s.cluster.Name}},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{DataSecretValueKey: value, DataSecretFormatKey: []byte(format)},
	}
	if err := controllerutil.SetControllerReference(cfg, want, r.Client.Scheme()); err != nil {
		return fmt.Errorf("nodezeroconfig %s/%s: data secret: %w", cfg.Namespace, cfg.Name, err)
	}
	have := &corev1.Secret{}
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil {
			return fmt.Errorf("nodezeroconfig %s/%s: create data secret: %w", cfg.Namespace, cfg.Name, err)
		}
	case err != nil:
		return fmt.Errorf("nodezeroconfig %s/%s: data secret: %w", cfg.Namespace, cfg.Name, err)
	default:
		if owner := metav1.GetControllerOf(have); owner == nil || owner.UID != cfg.UID {
			return fmt.Errorf("nodezeroconfig %s/%s: secret %s exists and is not this config's (controller %v): rename or delete it", cfg.Namespace, cfg.Name, have.Name, owner)
		}
		if have.Type != want.Type || have.Labels[clusterv1.ClusterNameLabel] != s.cluster.Name ||
			!bytes.Equal(have.Data[DataSecretValueKey], value) || !bytes.Equal(have.Data[DataSecretFormatKey], []byte(format)) {
			// The type is immutable; a secret of another type is replaced.
			if have.Type != want.Type {
				if err := r.Client.Delete(ctx, have); err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("nodezeroconfig %s/%s: replace data secret: %w", cfg.Namespace, cfg.Name, err)
				}
				if err := r.Client.Create(ctx, want); err != nil {
					return fmt.Errorf("nodezeroconfig %s/%s: replace data secret: %w", cfg.Namespace, cfg.Name, err)
				}
			} else {
				if have.Labels == nil {
					have.Labels = map[string]string{}
				}
				maps.Copy(have.Labels, want.Labels)
				have.Data = want.Data
				if err := r.Client.Update(ctx, have); err != nil {
					return fmt.Errorf("nodezeroconfig %s/%s: update data secret: %w", cfg.Namespace, cfg.Name, err)
				}
			}
		}
	}
	created := true
	cfg.Status.DataSecretName = want.Name
	cfg.Status.Initialization.DataSecretCreated = &created
	msg := fmt.Sprintf("secret %s: %s for infra-env %s", want.Name, format, ie.ID)
	setCondition(cfg, bootstrapv1.DataSecretAvailableCondition, metav1.ConditionTrue, bootstrapv1.DataSecretCreatedReason, msg)
	setCondition(cfg, bootstrapv1.ReadyCondition, metav1.ConditionTrue, bootstrapv1.DataSecretCreatedReason, msg)
	return nil
}
