class TiedWeightsMixin:
    """Keeps every TiedLinear equal to the transpose of its source layer."""

    def tied_pairs(self):
        for dec in self.decoder:
            yield dec, dec.source

    def tie_weights(self):
        # TiedLinear.forward reads enc.weight.t() directly: nothing to copy
        pass
