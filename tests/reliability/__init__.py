"""What a hostile or unlucky user does, and that nothing recorded is lost or leaked (#11)."""
