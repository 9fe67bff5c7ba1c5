# pypto.program: ReferenceForms
import pypto.language as pl

M = pl.dynamic("M")


@pl.program
class ReferenceForms:
    @pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
    def kernel(
        data__ssa_v0: pld.DistributedTensor[
            [1, 16],
            pl.FP32,
            pl.TensorView(valid_shape=[1, 8], stride=[16, 1], layout=pl.TensorLayout.ND),
            pl.MemRef("mem_ddr_0", 0, 64),
        ],
        out__ssa_v0: pl.Out[pl.Tensor[[8, 16], pl.FP32, pl.MemRef("mem_ddr_1", 0, 512)]],
        peer__ssa_v0: pl.Scalar[pl.INT32],
    ) -> pl.Tensor[[8, 16], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN, "split_aiv": True})
        mem_vec_2__ssa_v0: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 512)
        ctx__ssa_v0: pld.CommCtxType = pld.system.get_comm_ctx(data__ssa_v0)
        rank__ssa_v0: pl.Scalar[pl.INT32] = pld.system.rank(ctx__ssa_v0)
        idx__ssa_v0: pl.Scalar[pl.INDEX] = pl.cast(rank__ssa_v0, pl.INDEX)
        tile__ssa_v0: pl.Tile[
            [8, 16],
            pl.FP32,
            pl.MemRef(mem_vec_2__ssa_v0, 0, 512),
            pl.Mem.Vec,
            pl.TileView(valid_shape=[1, 8]),
        ] = pld.tile.remote_load(data__ssa_v0, peer__ssa_v0, [0, 0], [8, 16], [1, 8])
        padded__ssa_v0: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec, pl.TileView(pad=pl.PadValue.min)] = (
            pl.tile.fillpad(tile__ssa_v0, pad_value=pl.PadValue.min)
        )
        tmp__ssa_v0: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.create(
            [8, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec
        )
        sums__ssa_v0: pl.Tile[[8, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(padded__ssa_v0, tmp__ssa_v0)
        scaled__ssa_v0: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.row_expand_div(
            padded__ssa_v0, sums__ssa_v0
        )
        half__ssa_v0: pl.Tile[[8, 16], pl.FP16, pl.Mem.Vec] = pl.tile.cast(
            scaled__ssa_v0, target_type=pl.FP16, mode="rint"
        )
        back__ssa_v0: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.cast(
            half__ssa_v0, target_type=pl.FP32, mode="round"
        )
        for i__idx_v0, (acc__iter_v1,) in pl.range(
            4, init_values=(back__ssa_v0,), attrs={"iter_arg_rebind_0": True}
        ):
            if i__idx_v0 == idx__ssa_v0:
                break
            if i__idx_v0 == 2:
                continue
            nxt__ssa_v0: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(
                acc__iter_v1, pl.const(1.0, pl.FP32)
            )
            acc__rv_v2: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(nxt__ssa_v0)
        n__ssa_v0: pl.UnknownType = pld.system.notify(
            data__ssa_v0, peer__ssa_v0, [rank__ssa_v0, 0], pl.const(1, pl.INT32), op=0
        )
        shifted__ssa_v0: pl.Scalar[pl.INDEX] = (idx__ssa_v0 << 2) + (idx__ssa_v0 & 3)
        pl.system.bar_v()
        out_1__ssa_v0: pl.Tensor[[8, 16], pl.FP32, pl.MemRef("mem_ddr_1", 0, 512)] = pl.tile.store(
            acc__rv_v2, [0, 0], out__ssa_v0
        )
        return out_1__ssa_v0

    @pl.function(
        type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator, auto_scope=False
    )
    def orch(
        self,
        x__ssa_v0: pl.Tensor[[M, 16], pl.FP32],
        data__ssa_v0: pl.InOut[
            pld.DistributedTensor[
                [1, 16],
                pl.FP32,
                pl.TensorView(valid_shape=[1, 8], stride=[16, 1], layout=pl.TensorLayout.ND),
                pl.MemRef("mem_ddr_0", 0, 64),
            ]
        ],
        out__ssa_v0: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
    ) -> pl.Tensor[[8, 16], pl.FP32]:
        tids__ssa_v0: pl.Array[4, pl.TASK_ID] = pl.array.create(4, dtype=pl.TASK_ID)
        rows__ssa_v0: pl.Scalar[pl.INDEX] = pl.tensor.dim(x__ssa_v0, 0)
        with pl.scope(mode=pl.ScopeMode.MANUAL):
            part__ssa_v0: pl.Tensor[[8, 16], pl.FP32] = pl.tensor.slice(x__ssa_v0, [8, 16], [0, 0])
            doubled__ssa_v0: pl.Tensor[[8, 16], pl.FP32] = pl.tensor.muls(part__ssa_v0, 2.0)
            _submit_tmp__ssa_v0: pl.Tuple[pl.Tensor[[8, 16], pl.FP32], pl.Scalar[pl.TASK_ID]] = pl.submit(
                self.kernel, data__ssa_v0, out__ssa_v0, rows__ssa_v0, deps=[tids__ssa_v0]
            )
            y__ssa_v0: pl.Tensor[[8, 16], pl.FP32] = _submit_tmp__ssa_v0[0]
        for aiv__ssa_v0 in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            z__ssa_v0: pl.Tensor[[8, 16], pl.FP32] = self.kernel(
                data__ssa_v0,
                y__ssa_v0,
                rows__ssa_v0,
                attrs={"arg_directions": [pl.adir.input, pl.adir.output_existing]},
            )
        return z__ssa_v0

    @pl.function(type=pl.FunctionType.Spmd, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def spmd(self, x__ssa_v0: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:
        assert True, "always"
        return x__ssa_v0
