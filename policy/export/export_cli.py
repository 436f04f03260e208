"""``edgejudge export``: a checkpoint (or a random-init scorer) as a checked, checksummed ONNX bundle.

torch and onnxruntime are imported inside the command, so ``--help`` is instant.
"""

from __future__ import annotations

import json

import click

from models.cli_options import fail


@click.command()
@click.argument("checkpoint", required=False, type=click.Path())
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Bundle directory to write.")
@click.option(
    "--random-init",
    is_flag=True,
    help="Export a randomly initialised scorer instead of a checkpoint (to test a runtime).",
)
@click.option("--seed", default=0, show_default=True, type=int, help="--random-init: initialisation seed.")
@click.option(
    "--bundle-format",
    type=click.Choice(["1", "2", "3"]),
    default="3",
    show_default=True,
    help="--random-init: 3 (what training writes), the structured scorer with episode memory that also reads "
    "the token ids of items and candidates; 2, the same without tokens; 1, the flat scorer of older bundles "
    "(one state vector; takes embedding input).",
)
@click.option(
    "--encoder",
    default=None,
    help="Encoder to ship (default: the one the checkpoint was trained on; all-MiniLM-L6-v2 for "
    "--random-init): a known name, a sentence-transformers folder, or 'static' / 'static:BASE' for the "
    "static kind distilled from it (docs/encoders.md). It must be the checkpoint's.",
)
@click.option(
    "--skills",
    "skills_file",
    type=click.Path(exists=True, dir_okay=False),
    help="Text file with one skill (fixed action) per line; their embeddings go into skills.npy.",
)
@click.option(
    "--overwrite/--no-overwrite",
    default=True,
    show_default=True,
    help="Replace an existing bundle directory.",
)
@click.option(
    "--encoder-precision",
    type=click.Choice(["fp32", "int8"]),
    default="fp32",
    show_default=True,
    help="Transformer kind only. fp32: parity cosine >= 0.999 with sentence-transformers. int8 (opt-in): "
    "~2.4x faster on a CPU, cosine >= 0.995 (measured 0.9976 min on real TWX texts); in the manifest.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the export report as JSON.")
def export(
    checkpoint,
    out,
    random_init,
    seed,
    bundle_format,
    encoder,
    skills_file,
    overwrite,
    encoder_precision,
    as_json,
) -> None:
    """Export CHECKPOINT (a folder written by 'edgejudge train') as an ONNX bundle in OUT.

    Writes policy.onnx, encoder.onnx (mean pooling + normalisation inside), tokenizer.json, optional
    skills.npy and manifest.json (sha256 of every file, shapes, encoder kind, provenance). Parity is checked
    before the bundle is written: policy ONNX vs torch max abs diff <= 1e-4, encoder ONNX vs
    sentence-transformers cosine >= 0.999 (>= 0.995 for the opt-in --encoder-precision int8; the static
    kind against its numpy definition).
    """
    if bool(checkpoint) == bool(random_init):
        raise click.UsageError("give either CHECKPOINT or --random-init (exactly one)")
    skills = None
    if skills_file:
        with open(skills_file, encoding="utf-8") as f:
            skills = [line.strip() for line in f if line.strip()]
        if not skills:
            raise click.UsageError(f"{skills_file}: no skills (one per line)")

    from models.bundle import BundleError
    from models.encoder import EncoderError
    from policy.export.assemble import ExportError, export_bundle, export_random_bundle
    from policy.training.common import CheckpointError

    try:
        if random_init:
            report = export_random_bundle(
                out,
                seed=seed,
                bundle_format=int(bundle_format),
                encoder=encoder,
                skills=skills,
                overwrite=overwrite,
                encoder_precision=encoder_precision,
            )
        else:
            report = export_bundle(
                checkpoint,
                out,
                encoder=encoder,
                skills=skills,
                overwrite=overwrite,
                encoder_precision=encoder_precision,
            )
    except (CheckpointError, EncoderError, ExportError, BundleError, FileExistsError) as e:
        fail(str(e))
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(
            f"wrote {out}: policy parity max|diff| {report.policy_max_abs_diff_random:.1e} (random), "
            f"{report.policy_max_abs_diff_real:.1e} (real); encoder min cosine "
            f"{report.encoder_min_cosine:.6f}{' (cached encoder)' if report.encoder_cached else ''}"
        )
