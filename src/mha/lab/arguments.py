"""The lab's folders on a stage script's command line: one option per LabFolders field (dvc.yaml's path.lab_*)."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

from mha.lab.layout import LabFolders


def add_folder_arguments(parser: argparse.ArgumentParser) -> None:
    """--metrics, --plots, --models, --samples, --artifacts: the lab's folders, every one required."""
    for field in fields(LabFolders):
        parser.add_argument(f"--{field.name}", type=Path, required=True, help=f"the lab's {field.name} folder")


def lab_folders(args: argparse.Namespace) -> LabFolders:
    return LabFolders(**{field.name: getattr(args, field.name) for field in fields(LabFolders)})
